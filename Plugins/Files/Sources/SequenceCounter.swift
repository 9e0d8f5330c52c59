#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// The `{seq}` counter of one output folder, so numbering continues after a restart and
/// no number that ever named a stored photo is handed out again.
///
/// The number is owned, not guessed: `.shutterpipe-sequence` in the folder holds the last
/// one handed out, and it alone decides the next. Each reservation takes the folder's lock
/// (`flock`), reads the file again, and writes the next number back in place, so two
/// sessions writing one folder never hand out the same number. Its durability is not the
/// photos': after a crash the next number is the larger of the file's and the folder's
/// highest, so a number that named a stored photo never comes again.
///
/// At the start the folder's names are read too, and the larger number wins (a file lost,
/// emptied, or older than the photos after a crash); the `{seq}` part of a name is the
/// rightmost run of digits a name can have there: digits of the placeholders before it (a
/// label `ORDER-1234`) are never taken for it. A number reserved for a shot that failed may come again; it never
/// named a file.
///
/// `{cameraseq}` is the same for one camera (`camera`): a counter of its own in its own
/// file, `.shutterpipe-sequence-camera-NAME`, whose names are scanned for that camera's.
struct SequenceCounter {
    static let fileName = ".shutterpipe-sequence"

    let directory: String
    /// The counter's file name in `directory`.
    let fileName: String
    private(set) var last: Int

    /// Reads the counter of `directory` (of `camera`'s shots there, when given); only a
    /// missing or empty one is recovered from the names in it that `filename` could have
    /// produced.
    init(directory: String, filename: PlaceholderTemplate, camera: String? = nil) throws(ShutterError) {
        self.directory = directory
        fileName = camera.map { Self.fileName + "-camera-" + Self.encoded($0) } ?? Self.fileName
        // The file's number, or the folder's highest if larger: the file is written in
        // place without an fsync of its own, so after a crash it may hold an older one.
        let highest = Self.highestNumber(in: directory, matching: filename, counter: camera == nil ? "seq" : "cameraseq", camera: camera)
        last = max(try Self.stored(in: directory, fileName) ?? 0, highest)
    }

    /// The number the counter file holds; nil when it is missing or empty.
    static func stored(in directory: String, _ fileName: String, through reached: String? = nil) throws(ShutterError) -> Int? {
        let path = "\(directory)/\(fileName)"
        let data: Data
        do { data = try UntrustedFile.contents(of: "\(reached ?? directory)/\(fileName)", limits: .init(bytes: 4096)) } catch {
            if error.reason == .missing { return nil }
            throw ShutterError(.storageUnavailable, "the sequence file '\(path)' cannot be read: \(error.why)",
                               fix: "remove it: numbering continues after the highest number in the folder")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return nil }  // a rewrite a crash cut short
        guard let value = Int(text), value >= 0 else {
            throw ShutterError(.storageUnavailable, "the sequence file '\(path)' is damaged (it holds '\(LogText.escaped(String(text.prefix(40))))')",
                               fix: "write the last used number into it, or delete it to continue after the highest number in the folder")
        }
        return value
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

    /// Reserves the next number and records it, under the lock of `folder` (this counter's
    /// folder, opened without following links): another session writing the same folder
    /// sees it, and takes the one after.
    mutating func reserve(in folder: ConfinedFolder) throws(ShutterError) -> Int {
        precondition(folder.path == directory, "a counter is kept in its own folder")
        let lock = open(folder.pinned, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard lock >= 0 else { throw DurableWriter.storageError("cannot open folder", directory, errno) }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 && errno == EINTR {}
        if let stored = try Self.stored(in: directory, fileName, through: folder.pinned) { last = max(last, stored) }
        let next = last + 1
        let path = "\(directory)/\(fileName)"
        // Written in place: a new file renamed over it at every shot added an inode, two
        // names and a freed file to each photo's folder fsync (a 30-shot burst of 9 MB
        // photos took 1.2x as long). Never through a link (the folder may be shared).
        let file = openat(folder.descriptor, fileName, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o644)
        guard file >= 0 else { throw DurableWriter.storageError("cannot update the sequence file in", directory, errno) }
        defer { close(file) }
        var status = stat()
        guard fstat(file, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw ShutterError(.storageUnavailable, "the sequence file '\(path)' is not a regular file",
                               fix: "remove it: numbering continues after the highest number in the folder")
        }
        let text = Array("\(next)\n".utf8)
        // Numbers only grow, so the new text covers the old; a crash mid-write leaves a
        // file the next start reads as damaged or empty, and then the folder's names count.
        let written = text.withUnsafeBytes { pwrite(file, $0.baseAddress, $0.count, 0) }
        guard written == text.count else { throw DurableWriter.storageError("cannot update the sequence file in", directory, written < 0 ? errno : EIO) }
        if status.st_size > text.count { _ = ftruncate(file, off_t(text.count)) }
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
