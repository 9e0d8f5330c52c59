#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CLinux
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// Writes files so that a crash never leaves a partial file under a final name, never
/// replaces an existing file, and leaves no temporary file a later run cannot clean.
///
/// Where the file system has unnamed files (ext4, xfs, btrfs, tmpfs): the photo is
/// written to an `O_TMPFILE` in the target folder, fsynced, then linked under its name,
/// which fails if the name exists. A crash at any point leaves nothing: an unnamed file
/// vanishes with its last descriptor. Elsewhere (exFAT cards, NFS): a named temporary
/// file held under an `flock` for its whole life (``LockedTemporaryFile``), fsynced and
/// renamed without replacing. The caller fsyncs the folder afterwards
/// (``syncDirectory(_:)``).
enum DurableWriter {
    /// Writes `data` as a new file at `path`. Returns false, writing nothing, when `path`
    /// already exists.
    static func writeNew(_ data: Data, to path: String) throws(ShutterError) -> Bool {
        try writeNew([data], to: path)
    }

    /// Writes `chunks` one after the other as a new file at `path`; see ``writeNew(_:to:)``.
    /// `unnamed: false` takes the named fallback even where unnamed files exist (tests).
    static func writeNew(_ chunks: [Data], to path: String, unnamed: Bool = true) throws(ShutterError) -> Bool {
        let directory = (path as NSString).deletingLastPathComponent
        if unnamed, let linked = try writeUnnamed(chunks, to: path, in: directory) { return linked }
        let temporary: LockedTemporaryFile
        do { temporary = try LockedTemporaryFile.create(in: directory) } catch { throw storageError("cannot create a file in", directory, error.code) }
        var failure = temporary.write(chunks)
        if failure == 0 && fsync(temporary.descriptor) != 0 { failure = errno }
        if failure != 0 {
            temporary.discard()
            throw storageError("cannot write", path, failure)
        }
        defer { close(temporary.descriptor) }  // the lock is held until the name is final
        if sp_rename_noreplace(temporary.path, path) != 0 {
            let error = errno
            unlink(temporary.path)
            if error == EEXIST { return false }
            throw storageError("cannot move the photo into place at", path, error)
        }
        return true
    }

    /// The unnamed-file way; `nil` when the file system has none (or /proc is missing),
    /// so the named way is taken.
    private static func writeUnnamed(_ chunks: [Data], to path: String, in directory: String) throws(ShutterError) -> Bool? {
        let descriptor = sp_open_unnamed(directory, 0o644)
        if descriptor < 0 {
            if [EOPNOTSUPP, EISDIR, EINVAL, ENOTSUP].contains(errno) { return nil }
            throw storageError("cannot create a file in", directory, errno)
        }
        defer { close(descriptor) }
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
        if failure != 0 { throw storageError("cannot write", path, failure) }
        if sp_link_unnamed(descriptor, path) != 0 {
            if errno == EEXIST { return false }
            if errno == ENOENT && !FileManager.default.fileExists(atPath: "/proc/self/fd") { return nil }
            throw storageError("cannot move the photo into place at", path, errno)
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

    /// Removes temporary files that killed runs left (only named ones can be left).
    /// Returns how many.
    @discardableResult
    static func removeStaleTemporaryFiles(in directory: String) -> Int {
        LockedTemporaryFile.removeAbandoned(in: directory)
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
