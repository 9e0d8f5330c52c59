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
    static func writeNew(_ data: Data, to path: String, in folder: ConfinedFolder? = nil) throws(ShutterError) -> Bool {
        try writeNew([data], to: path, in: folder)
    }

    /// Writes `chunks` one after the other as a new file at `path`; see ``writeNew(_:to:)``.
    /// `unnamed: false` takes the named fallback even where unnamed files exist (tests).
    static func writeNew(_ chunks: [Data], to path: String, in folder: ConfinedFolder? = nil, unnamed: Bool = true) throws(ShutterError) -> Bool {
        try prepare(chunks, for: path, in: folder, unnamed: unnamed).place(at: path)
    }

    /// Writes `chunks` and fsyncs them into a file in `path`'s folder that has no final
    /// name yet. Naming it (``PreparedFile/place(at:)``) is the only step that a taken name
    /// repeats. With `folder` (the open folder of `path`, reached without following a
    /// link), the file is made and named in that very folder, whatever is renamed meanwhile.
    static func prepare(_ chunks: [Data], for path: String, in folder: ConfinedFolder? = nil, unnamed: Bool = true) throws(ShutterError) -> PreparedFile {
        let directory = PathName.parent(path)
        precondition(folder == nil || folder?.path == directory, "a file is prepared in its own folder")
        let reached = folder?.pinned ?? directory
        if unnamed, ConfinedFolder.pinsThroughProc {
            let descriptor = sp_open_unnamed(reached, 0o644)
            if descriptor >= 0 {
                let prepared = PreparedFile(folder: directory, confined: folder, descriptor: descriptor, temporaryPath: nil)
                try prepared.write(chunks, for: path)
                return prepared
            }
            if ![EOPNOTSUPP, EISDIR, EINVAL, ENOTSUP].contains(errno) { throw storageError("cannot create a file in", directory, errno) }
        }
        let temporary: LockedTemporaryFile
        do { temporary = try LockedTemporaryFile.create(in: reached) } catch { throw storageError("cannot create a file in", directory, error.code) }
        // The descriptor holds the lock until the name is final (or the file discarded).
        let prepared = PreparedFile(folder: directory, confined: folder, descriptor: temporary.descriptor, temporaryPath: temporary.path)
        try prepared.write(chunks, for: path)
        return prepared
    }

    /// Makes the names in `directory` durable.
    static func syncDirectory(_ directory: String) throws(ShutterError) {
        do throws(SystemError) { try DurableFile.syncFolder(directory) } catch { throw storageError("cannot sync folder", directory, error.code) }
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
        for component in PathName.components(directory) {
            path += "/" + component
            if mkdir(path, 0o755) != 0 && errno != EEXIST {
                throw storageError("cannot create folder", path, errno)
            }
        }
    }

    /// Opens `folder`, made where missing, below `root` (made where missing, as the config
    /// names it), never through a symbolic link below `root`: whoever may write the capture
    /// folder could otherwise send the session's writes anywhere it may write.
    static func confinedFolder(_ folder: String, below root: String) throws(ShutterError) -> ConfinedFolder {
        try createDirectory(root)
        do { return try ConfinedFolder.open(folder, below: root) } catch {
            if case .system(let code) = error.reason { throw storageError("cannot create folder", error.component, code) }
            throw ShutterError(.storageUnavailable, "not stored in '\(folder)': \(error)", fix: error.reason == .link ? "the session makes the folders below '\(root)' itself: replace the link with the folder it points at, or set 'directory' to where it leads" : error.fix)
        }
    }

    /// Checks that `directory` takes a new file the way a photo is written (an unnamed
    /// file, or a locked temporary one), and drops it unnamed: nothing is left behind.
    static func checkWritable(_ directory: String) throws(ShutterError) {
        _ = try prepare([], for: "\(directory)/.shutterpipe-preflight")
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

/// A file whose bytes are written and fsynced, waiting for its final name: an unnamed
/// `O_TMPFILE`, or a named temporary file held under its lock. Dropped without a name, it
/// leaves nothing behind.
final class PreparedFile {
    /// The folder it was made in; only names in this folder can be given to it.
    let folder: String
    /// That folder, held open when it was reached without following links: the name is
    /// given in it, not wherever its path leads by then.
    private let confined: ConfinedFolder?
    private let descriptor: Int32
    private var temporaryPath: String?

    fileprivate init(folder: String, confined: ConfinedFolder?, descriptor: Int32, temporaryPath: String?) {
        self.folder = folder
        self.confined = confined
        self.descriptor = descriptor
        self.temporaryPath = temporaryPath
    }

    deinit {
        if let temporaryPath { unlink(temporaryPath) }
        close(descriptor)
    }

    fileprivate func write(_ chunks: [Data], for path: String) throws(ShutterError) {
        var failure = LockedTemporaryFile.write(chunks, to: descriptor)
        if failure == 0 && fsync(descriptor) != 0 { failure = errno }
        if failure != 0 { throw DurableWriter.storageError("cannot write", path, failure) }
    }

    /// Gives the file its final name, never replacing one: false when `path` is taken, and
    /// the file is still ready for another name. After true, it is done.
    func place(at path: String) throws(ShutterError) -> Bool {
        precondition(PathName.parent(path) == folder, "a prepared file is named in its own folder")
        let target = confined?.pinned(PathName.lastComponent(path)) ?? path
        if let temporary = temporaryPath {
            guard sp_rename_noreplace(temporary, target) == 0 else {
                if errno == EEXIST { return false }
                throw DurableWriter.storageError("cannot move the photo into place at", path, errno)
            }
            temporaryPath = nil
            return true
        }
        guard sp_link_unnamed(descriptor, target) == 0 else {
            if errno == EEXIST { return false }
            throw DurableWriter.storageError("cannot move the photo into place at", path, errno)
        }
        return true
    }
}
