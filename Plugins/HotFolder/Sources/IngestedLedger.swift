#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import Synchronization

/// The files of a hot folder already taken, so that none is taken twice across restarts:
/// a line per file (name, size, modification time) in `.shutterpipe-hotfolder-ingested`,
/// appended and fsynced once every sink stored it. A file written again under its name
/// (another size or time) is a new file.
final class IngestedLedger: Sendable {
    static let name = ".shutterpipe-hotfolder-ingested"

    private let path: String
    private let known: Mutex<Set<String>>

    init(folder: String) {
        path = "\(folder)/\(Self.name)"
        let text = FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) } ?? ""
        known = Mutex(Set(text.split(separator: "\n").map(String.init)))
    }

    /// The key of the file at `path` as it is now; nil when it is gone.
    static func key(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return "\((path as NSString).lastPathComponent)\t\(info.st_size)\t\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
    }

    func contains(_ key: String) -> Bool { known.withLock { $0.contains(key) } }

    /// Records a file durably; false when the record could not be written.
    func add(_ key: String) -> Bool {
        guard known.withLock({ $0.insert(key).inserted }) else { return true }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let bytes = Array((key + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        return written == bytes.count && fsync(descriptor) == 0
    }
}

/// Moving originals out of the hot folder without ever replacing a file.
enum DurableFiles {
    static func makeFolder(_ path: String) throws(ShutterError) {
        do { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) } catch {
            throw ShutterError(.storageUnavailable, "hotfolder: cannot make '\(path)': \(error.localizedDescription)", fix: "set doneFolder to a folder this user may write")
        }
    }

    /// Moves `path` into `folder` under its name (`-2`, `-3`… when taken): a hard link, then
    /// the old name removed, so no file is ever replaced; across file systems, a copy
    /// fsynced first.
    static func move(_ path: String, into folder: String) throws(ShutterError) {
        let name = (path as NSString).lastPathComponent
        let stem = (name as NSString).deletingPathExtension, ext = (name as NSString).pathExtension
        for attempt in 1...1000 {
            let target = "\(folder)/\(attempt == 1 ? name : "\(stem)-\(attempt)\(ext.isEmpty ? "" : ".\(ext)")")"
            if link(path, target) == 0 {
                unlink(path)
                return
            }
            switch errno {
            case EEXIST: continue
            case EXDEV:
                guard let data = FileManager.default.contents(atPath: path) else { break }
                let descriptor = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
                if descriptor < 0 && errno == EEXIST { continue }
                guard descriptor >= 0 else { break }
                let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                let synced = fsync(descriptor) == 0
                close(descriptor)
                guard written == data.count, synced else { unlink(target); break }
                unlink(path)
                return
            default: break
            }
            break
        }
        throw ShutterError(.storageUnavailable, "cannot move '\(path)' into '\(folder)': \(String(cString: strerror(errno)))")
    }
}
