#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CLinux
import Foundation
import ShutterPipeKit

/// Writes files so that a crash never leaves a partial file under a final name and never
/// replaces an existing file: temporary file in the target folder, fsync, rename without
/// replacing, fsync the folder.
enum DurableWriter {
    /// The prefix of temporary files; ``removeStaleTemporaryFiles(in:)`` cleans up files
    /// with it that a killed process left behind.
    static let temporaryPrefix = ".shutterpipe-tmp-"

    /// Writes `data` as a new file at `path`. Returns false, writing nothing, when `path`
    /// already exists. The caller fsyncs the folder afterwards (``syncDirectory(_:)``).
    static func writeNew(_ data: Data, to path: String) throws(ShutterError) -> Bool {
        try writeNew([data], to: path)
    }

    /// Writes `chunks` one after the other as a new file at `path`; see ``writeNew(_:to:)``.
    static func writeNew(_ chunks: [Data], to path: String) throws(ShutterError) -> Bool {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = "\(directory)/\(temporaryPrefix)\(getpid())-\(UInt64.random(in: 0...UInt64.max)).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw storageError("cannot create a file in", directory, errno) }
        var failure: Int32 = 0
        for chunk in chunks where failure == 0 {
            chunk.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let written = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        failure = errno
                        return
                    }
                    offset += written
                }
            }
        }
        if failure == 0 && fsync(descriptor) != 0 { failure = errno }
        if close(descriptor) != 0 && failure == 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw storageError("cannot write", path, failure)
        }
        if sp_rename_noreplace(temporary, path) != 0 {
            let error = errno
            unlink(temporary)
            if error == EEXIST { return false }
            throw storageError("cannot move the photo into place at", path, error)
        }
        return true
    }

    /// Makes the names in `directory` durable.
    static func syncDirectory(_ directory: String) throws(ShutterError) {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw storageError("cannot open folder", directory, errno) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw storageError("cannot sync folder", directory, errno) }
    }

    /// Creates `directory` and its parents where missing.
    static func createDirectory(_ directory: String) throws(ShutterError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw ShutterError(.storageUnavailable, "'\(directory)' exists but is not a folder", fix: "move it away or change 'directory'")
            }
            return
        }
        var path = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            path += "/" + component
            if mkdir(path, 0o755) != 0 && errno != EEXIST {
                throw storageError("cannot create folder", path, errno)
            }
        }
    }

    /// Removes temporary files of processes that no longer run. Returns how many.
    @discardableResult
    static func removeStaleTemporaryFiles(in directory: String) -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return 0 }
        var removed = 0
        for name in names where name.hasPrefix(temporaryPrefix) && name.hasSuffix(".tmp") {
            if let pid = pid_t(name.dropFirst(temporaryPrefix.count).prefix { $0 != "-" }) {
                if pid == getpid() { continue }
                if kill(pid, 0) == 0 || errno == EPERM { continue }  // still running
            }
            if unlink("\(directory)/\(name)") == 0 { removed += 1 }
        }
        return removed
    }

    /// Bytes available to unprivileged users at `path`.
    static func availableBytes(at path: String) -> Int64? {
        var stats = statvfs()
        guard statvfs(path, &stats) == 0 else { return nil }
        return Int64(stats.f_bavail) * Int64(stats.f_frsize)
    }

    /// A storage failure that names the place and the fix.
    static func storageError(_ action: String, _ path: String, _ code: Int32) -> ShutterError {
        let reason = String(cString: strerror(code))
        switch code {
        case ENOSPC, EDQUOT:
            return ShutterError(.storageUnavailable, "disk full: \(action) '\(path)': \(reason)",
                                fix: "free space on that disk or point 'directory' at another one")
        case EROFS:
            return ShutterError(.storageUnavailable, "read-only file system: \(action) '\(path)'",
                                fix: "remount it read-write or point 'directory' elsewhere")
        case EACCES, EPERM:
            return ShutterError(.storageUnavailable, "no permission: \(action) '\(path)'",
                                fix: "give this user write access to the folder (chmod/chown) or choose another")
        case ENOENT, ENOTDIR:
            return ShutterError(.storageUnavailable, "folder missing: \(action) '\(path)'",
                                fix: "check that the disk is mounted and the folder exists")
        case ENAMETOOLONG:
            return ShutterError(.storageUnavailable, "name too long: \(action) '\(path)'", fix: "shorten the 'filename' template")
        default:
            return ShutterError(.storageUnavailable, "\(action) '\(path)': \(reason)")
        }
    }
}
