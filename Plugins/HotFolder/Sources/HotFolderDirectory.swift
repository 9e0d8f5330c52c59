#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// A folder the hot folder reads or writes, opened once: every name in it is looked at,
/// opened, moved or removed relative to this descriptor (`openat`, `fstatat` without
/// following links, `renameat2`, `unlinkat`), so a name that others replace by a link, or
/// a folder above it swapped meanwhile, never sends us elsewhere.
///
/// Whoever may write into the watched folder (a Wi-Fi camera's FTP account, another user)
/// can put any name there: a link to `/etc/shadow` or to `~/.ssh/authorized_keys`, a FIFO,
/// a sparse file of a terabyte. docs/security.md, "The hot folder", has what they can and
/// cannot do.
final class HotFolderDirectory: Sendable {
    /// The folder's path, for messages.
    let path: String
    let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Opens the watched folder itself (its path is the config's: links in it are the
    /// machine's own layout, and followed).
    static func watched(_ path: String) throws(ShutterError) -> HotFolderDirectory {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw ShutterError(.noCamera, "hotfolder: '\(path)' is not a folder\(code == ENOENT || code == ENOTDIR ? "" : ": \(String(cString: strerror(code)))")",
                               fix: "make it (mkdir -p \(path)), or set 'folder' to the one the photos are written into")
        }
        return HotFolderDirectory(path: path, descriptor: descriptor)
    }

    /// Opens (making it when missing) the folder `move` puts originals in: `ingested`
    /// inside the watched folder, or `doneFolder`. Its last component is never a link
    /// (whoever writes the watched folder could make `ingested` one, into a private folder).
    static func done(_ configured: String?, in watched: HotFolderDirectory, log: Logger) throws(ShutterError) -> HotFolderDirectory {
        let descriptor: Int32
        let path: String
        if let configured {
            path = configured
            if access(configured, F_OK) != 0 {
                do { try FileManager.default.createDirectory(atPath: configured, withIntermediateDirectories: true) } catch {
                    throw ShutterError(.storageUnavailable, "hotfolder: cannot make '\(configured)': \(error.localizedDescription)", fix: "set doneFolder to a folder this user may write")
                }
            }
            descriptor = open(configured, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        } else {
            path = "\(watched.path)/ingested"
            if mkdirat(watched.descriptor, "ingested", 0o755) != 0 && errno != EEXIST {
                throw ShutterError(.storageUnavailable, "hotfolder: cannot make '\(path)': \(String(cString: strerror(errno)))", fix: "set doneFolder to a folder this user may write")
            }
            descriptor = openat(watched.descriptor, "ingested", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        }
        guard descriptor >= 0 else {
            let code = errno
            if code == ELOOP || code == ENOTDIR {
                throw ShutterError(.storageUnavailable, "hotfolder: the done folder '\(path)' is a symbolic link or not a folder: originals are never moved through a link",
                                   fix: "remove '\(path)' (the session makes the folder), or set doneFolder to a real folder")
            }
            throw ShutterError(.storageUnavailable, "hotfolder: cannot open the done folder '\(path)': \(String(cString: strerror(code)))", fix: "set doneFolder to a folder this user may write")
        }
        let folder = HotFolderDirectory(path: path, descriptor: descriptor)
        var info = stat()
        if fstat(descriptor, &info) == 0, info.st_uid != geteuid() {
            log.warning("hotfolder: the done folder '\(path)' belongs to another user (uid \(info.st_uid)): they can remove what is moved there; set doneFolder to a folder of this user's to keep the originals")
        }
        return folder
    }

    /// The entry `name` as it is (a link is a link), or nil when there is none.
    func status(of name: [UInt8]) -> stat? {
        var info = stat()
        let found = FolderCalls.withCString(name) { fstatat(descriptor, $0, &info, AT_SYMLINK_NOFOLLOW) }
        return found == 0 ? info : nil
    }

    /// Every entry's name and status, in byte order (`.` and `..` left out).
    func entries() -> [(name: [UInt8], status: stat)] {
        let copy = dup(descriptor)
        guard copy >= 0, let directory = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            return []
        }
        defer { closedir(directory) }
        rewinddir(directory)
        var found: [(name: [UInt8], status: stat)] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            guard name != [0x2E], name != [0x2E, 0x2E], let info = status(of: name) else { continue }
            found.append((name, info))
        }
        return found.sorted { $0.name.lexicographicallyPrecedes($1.name) }
    }

    /// Opens `name` for reading, as ``UntrustedFile`` does.
    func openFile(_ name: [UInt8], limits: UntrustedFile.Limits) throws(UntrustedFileError) -> UntrustedFile {
        try UntrustedFile.open(name, in: descriptor, limits: limits)
    }

    /// Removes `name` if it still is the file `identity` names; false when it is not.
    @discardableResult
    func remove(_ name: [UInt8], if identity: FileIdentity) -> Bool {
        guard let info = status(of: name), FileIdentity(info) == identity else { return false }
        return FolderCalls.withCString(name) { unlinkat(descriptor, $0, 0) } == 0
    }

    /// Makes the folder's names durable.
    func sync() {
        fsync(descriptor)
    }

    /// Moves `name` of `folder` (still the file `identity` names) into this folder under
    /// its name, or `-2`, `-3`… when taken; never replacing a file, never through a link.
    ///
    /// A file of ours that nobody else may write is renamed into place. Any other (the FTP
    /// user's own file, or one with several names) is copied from `data`, the bytes that
    /// were read and stored, into a new file of ours (its mode at most 0644), and the
    /// original removed: a hard link would leave it writable by whoever wrote it. Returns
    /// the name it got.
    func move(_ name: [UInt8], from folder: HotFolderDirectory, identity: FileIdentity, data: Data) throws(ShutterError) -> String {
        guard let info = folder.status(of: name), FileIdentity(info) == identity, info.st_mode & S_IFMT == S_IFREG else {
            throw ShutterError(.storageUnavailable, "it changed or went away since it was taken; left where it is")
        }
        let ours = info.st_uid == geteuid() && info.st_mode & 0o022 == 0 && info.st_nlink == 1
        var renameFailed = false
        for attempt in 1...1000 {
            let target = Self.candidate(name, attempt)
            if ours && !renameFailed {
                if FolderCalls.renameWithoutReplacing(name, in: folder.descriptor, to: target, in: descriptor) == 0 {
                    sync()
                    folder.sync()
                    return PathName.shown(target)
                }
                if errno == EEXIST { continue }
                guard errno == EXDEV else { throw ShutterError(.storageUnavailable, String(cString: strerror(errno))) }
                renameFailed = true  // across file systems: copied below
            }
            switch try copy(data, to: target, mode: info.st_mode & 0o644) {
            case false: continue  // the name is taken
            case true:
                folder.remove(name, if: identity)
                folder.sync()
                return PathName.shown(target)
            }
        }
        throw ShutterError(.storageUnavailable, "a thousand names in '\(path)' are taken")
    }

    /// Writes `data` as a new file `target` (``DurableFile/create(_:named:in:mode:)``: a
    /// temporary name, fsync, a rename that never replaces, the folder fsynced); false when
    /// `target` is taken.
    private func copy(_ data: Data, to target: [UInt8], mode: mode_t) throws(ShutterError) -> Bool {
        do throws(SystemError) { return try DurableFile.create(data, named: target, in: descriptor, mode: mode) } catch {
            throw ShutterError(.storageUnavailable, "cannot write into '\(path)': cannot \(error.description)")
        }
    }

    /// `name`, or `stem-N.ext` for the Nth attempt (bytes, split at the last `.`).
    static func candidate(_ name: [UInt8], _ attempt: Int) -> [UInt8] {
        guard attempt > 1 else { return name }
        let suffix = Array("-\(attempt)".utf8)
        if let dot = name.lastIndex(of: 0x2E), dot > 0 { return Array(name[..<dot]) + suffix + Array(name[dot...]) }
        return name + suffix
    }
}
