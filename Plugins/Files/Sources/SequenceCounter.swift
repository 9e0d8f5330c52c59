#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// The `{seq}` counter of one output folder, so numbering continues after a restart and
/// no number that ever named a stored photo is handed out again.
///
/// The names of the stored photos are the record: each is durable (fsync of file and
/// folder) before its shot is answered. On first use the counter starts after the
/// highest number found in the folder's names that fit the template, or after the
/// number kept in `.shutterpipe-sequence`, whichever is higher. That file is rewritten
/// after every reservation without an fsync of its own: the photo's folder fsync, which
/// follows, makes it durable with the photo. After a crash it may be a step behind, and
/// the scan of the names covers that gap. A number reserved for a shot that failed may
/// come again; it never named a file.
///
/// `{cameraseq}` is the same for one camera (`camera`): a counter of its own in its own
/// file, `.shutterpipe-sequence-camera-NAME`, whose names are scanned for that camera's.
struct SequenceCounter {
    static let fileName = ".shutterpipe-sequence"

    let directory: String
    /// The counter's file name in `directory`.
    let fileName: String
    private(set) var last: Int

    /// Reads the counter of `directory` (of `camera`'s shots there, when given),
    /// reconciled with the names in it that `filename` could have produced.
    init(directory: String, filename: PlaceholderTemplate, camera: String? = nil) throws(ShutterError) {
        self.directory = directory
        fileName = camera.map { Self.fileName + "-camera-" + Self.encoded($0) } ?? Self.fileName
        let path = "\(directory)/\(fileName)"
        var stored = 0
        if let data = FileManager.default.contents(atPath: path) {
            let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if !text.isEmpty {  // empty: a rewrite a crash cut short; the scan below covers it
                guard let value = Int(text), value >= 0 else {
                    throw ShutterError(.storageUnavailable, "the sequence file '\(path)' is damaged (it holds '\(text.prefix(40))')",
                                       fix: "write the last used number into it, or delete it to continue after the highest number in the folder")
                }
                stored = value
            }
        }
        last = max(stored, Self.highestNumber(in: directory, matching: filename, counter: camera == nil ? "seq" : "cameraseq", camera: camera))
    }

    /// A camera's name as a file-name part: letters, digits, `-` and `_` as they are,
    /// anything else as `%XX` (names are free text: `../left`, `Cam A`).
    static func encoded(_ camera: String) -> String {
        camera.utf8.map { byte in
            let scalar = Unicode.Scalar(byte)
            return byte < 0x80 && (CharacterSet.alphanumerics.contains(scalar) || byte == 0x2D || byte == 0x5F)
                ? String(scalar) : String(format: "%%%02X", byte)
        }.joined()
    }

    /// Reserves the next number and records it.
    mutating func reserve() throws(ShutterError) -> Int {
        let next = last + 1
        let path = "\(directory)/\(fileName)"
        let temporary: LockedTemporaryFile
        do { temporary = try LockedTemporaryFile.create(in: directory, tag: "-seq") } catch {
            throw DurableWriter.storageError("cannot create a file in", directory, error.code)
        }
        var failure = temporary.write([Data("\(next)\n".utf8)])
        if failure == 0 && rename(temporary.path, path) != 0 { failure = errno }
        close(temporary.descriptor)
        if failure != 0 {
            unlink(temporary.path)
            throw DurableWriter.storageError("cannot update the sequence file in", directory, failure)
        }
        last = next
        return next
    }

    /// The highest `{seq}` (or `{cameraseq}` of `camera`) value among the names below
    /// `directory` that `template` could have produced (0 when there is none, or the
    /// template has no such counter).
    static func highestNumber(in directory: String, matching template: PlaceholderTemplate, counter: String = "seq", camera: String? = nil) -> Int {
        guard template.uses(counter), let pattern = template.sequencePattern(counter, camera: camera) else { return 0 }
        let depth = template.text.filter { $0 == "/" }.count
        var highest = 0
        func visit(_ folder: String, _ relative: String, _ level: Int) {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
            for name in names where !name.hasPrefix(".") {
                let path = relative.isEmpty ? name : "\(relative)/\(name)"
                if level < depth {
                    visit("\(folder)/\(name)", path, level + 1)
                } else if let number = pattern.number(in: path) {
                    highest = max(highest, number)
                }
            }
        }
        visit(directory, "", 0)
        return highest
    }
}
