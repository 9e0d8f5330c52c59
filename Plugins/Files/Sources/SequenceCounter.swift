#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit

/// The `{seq}` counter of one output folder, persisted in `.shutterpipe-sequence` so it
/// continues after a restart.
///
/// Every number is written durably (temporary file, fsync, rename) before a photo uses it,
/// so a crash can skip a number but never hand it out twice.
struct SequenceCounter {
    static let fileName = ".shutterpipe-sequence"

    let directory: String
    private(set) var last: Int

    /// Reads the counter of `directory` (0 when it has none yet).
    init(directory: String) throws(ShutterError) {
        self.directory = directory
        let path = "\(directory)/\(Self.fileName)"
        guard let data = FileManager.default.contents(atPath: path) else {
            last = 0
            return
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let value = Int(text), value >= 0 else {
            throw ShutterError(.storageUnavailable, "the sequence file '\(path)' is damaged (it holds '\(text.prefix(40))')",
                               fix: "write the last used number into it, or delete it to start again from 1")
        }
        last = value
    }

    /// Reserves the next number durably and returns it.
    mutating func reserve() throws(ShutterError) -> Int {
        let next = last + 1
        let path = "\(directory)/\(Self.fileName)"
        let temporary = "\(directory)/\(DurableWriter.temporaryPrefix)\(getpid())-seq.tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw DurableWriter.storageError("cannot create a file in", directory, errno) }
        let bytes = Array("\(next)\n".utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        var failure: Int32 = written == bytes.count ? 0 : (written < 0 ? errno : EIO)
        if failure == 0 && fsync(descriptor) != 0 { failure = errno }
        close(descriptor)
        if failure == 0 && rename(temporary, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw DurableWriter.storageError("cannot update the sequence file in", directory, failure)
        }
        last = next
        return next
    }
}
