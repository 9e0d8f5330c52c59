#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CShutterPipeSupport
import Foundation

/// A folder below a root that the session owns, opened (and made, where missing) one name
/// at a time, never through a symbolic link below that root, and held open.
///
/// Whoever may write a folder (a synced folder, a shared disk, a hot folder's FTP account)
/// can replace a folder inside it by a link: `captures/ORDER-7 -> /root/.ssh`. A session
/// that makes `captures/ORDER-7/0001.jpg` by its path then writes where the link points,
/// with the session's rights. The root itself (`directory` in the config) and the folders
/// above it are the machine's own layout and may be links (`/home` on another disk).
///
/// Files are then made through ``pinned(_:)``, a path through `/proc/self/fd` that reaches
/// this very folder however its name is changed or replaced after the open.
public final class ConfinedFolder {
    /// The folder as people know it: the root, then the names below it.
    public let path: String
    /// The open folder (`O_DIRECTORY`); closed with this object.
    public let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// A folder that cannot be opened below its root, and why.
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        /// The folder asked for.
        public let folder: String
        /// The first name on the way that failed: a link, not a folder, or the system's error.
        public let component: String
        public enum Reason: Sendable, Equatable {
            /// A symbolic link below the root: never followed.
            case link
            /// Something that is not a folder.
            case notFolder
            /// `.` or `..`, which would leave the root.
            case leavesRoot
            /// The system call failed with this `errno`.
            case system(Int32)
        }
        public let reason: Reason

        public var description: String {
            switch reason {
            case .link: "'\(component)' is a symbolic link (never followed: nothing is written where it points)"
            case .notFolder: "'\(component)' is not a folder"
            case .leavesRoot: "'\(folder)' leaves its root folder"
            case .system(let code): "'\(component)': \(String(cString: strerror(code)))"
            }
        }

        /// What to do, for the message's fix.
        public var fix: String {
            switch reason {
            case .link: "the session makes its folders itself: replace the link with the folder it points at, or point the config at where it leads"
            case .notFolder: "move it away: a folder of that name is made"
            case .leavesRoot: "remove '.' and '..' from the template"
            case .system(let code): code == ENOENT ? "check that the disk is mounted and the folder exists" : "check the folder's owner and mode"
            }
        }
    }

    /// Opens `folder`, which is `root` or lies below it, making each missing folder below
    /// `root` with `mode` when `create`. `root` itself is opened as the config names it
    /// (following links) and must exist. Every name below it is opened with `O_NOFOLLOW`:
    /// a link there is refused, whatever it points at.
    public static func open(_ folder: String, below root: String, create mode: mode_t? = 0o755) throws(Refusal) -> ConfinedFolder {
        let rootPath = root.isEmpty ? "." : root
        var current = Glibc.open(rootPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard current >= 0 else { throw Refusal(folder: folder, component: rootPath, reason: errno == ENOTDIR ? .notFolder : .system(errno)) }
        // By bytes: a name that begins with a combining mark is below its folder all the same.
        // A root of "." holds every relative path.
        let whole = (root.isEmpty || root == ".") && folder.utf8.first != UInt8(ascii: "/") ? folder : nil
        guard let relative = PathName.relative(folder, below: root) ?? whole else {
            close(current)
            throw Refusal(folder: folder, component: folder, reason: .leavesRoot)
        }
        var reached = root
        for name in PathName.components(relative) {
            reached = reached.utf8.last == UInt8(ascii: "/") ? reached + name : reached + "/" + name
            if name == "." { continue }
            guard name != ".." else {
                close(current)
                throw Refusal(folder: folder, component: reached, reason: .leavesRoot)
            }
            // Opened first: made (once) only when missing, so that a shot into a folder that
            // exists costs no mkdir (a round trip on NFS).
            var next = openat(current, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if next < 0 && errno == ENOENT, let mode {
                if mkdirat(current, name, mode) != 0 && errno != EEXIST {
                    let code = errno
                    close(current)
                    throw Refusal(folder: folder, component: reached, reason: .system(code))
                }
                next = openat(current, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            }
            if next < 0 {
                let code = errno
                var info = stat()
                let isLink = fstatat(current, name, &info, AT_SYMLINK_NOFOLLOW) == 0 && info.st_mode & S_IFMT == S_IFLNK
                close(current)
                throw Refusal(folder: folder, component: reached, reason: isLink || code == ELOOP ? .link : code == ENOTDIR ? .notFolder : .system(code))
            }
            close(current)
            current = next
        }
        return ConfinedFolder(path: folder, descriptor: current)
    }

    /// A path to `name` in this very folder: through `/proc/self/fd`, so that a rename or
    /// a link put in its place after the open changes nothing. Where `/proc` is missing, the
    /// folder's own path (`path/name`).
    public func pinned(_ name: String) -> String {
        Self.pinsThroughProc ? "/proc/self/fd/\(descriptor)/\(name)" : "\(path)/\(name)"
    }

    /// The folder itself, pinned as ``pinned(_:)`` is.
    public var pinned: String { Self.pinsThroughProc ? "/proc/self/fd/\(descriptor)" : path }

    /// Makes the names in the folder durable.
    public func sync() throws(SystemError) {
        guard fsync(descriptor) == 0 else { throw SystemError("fsync the folder '\(path)'") }
    }

    /// Whether an open descriptor can be named as a path (`/proc/self/fd/N`, or
    /// `/proc/PID/fd/N` for another process of the same user): how a file or folder opened
    /// without following links is handed to code that takes paths.
    public static let pinsThroughProc = access("/proc/self/fd", F_OK) == 0

    /// Whether the file system holding `path` keeps owners, modes and links of its own:
    /// not FAT, exFAT or a FUSE one (a camera card, an SSD formatted for Macs and PCs), where
    /// every file's owner and mode are the mount's and there are no links.
    public static func ownersAreReal(_ path: String) -> Bool {
        let kind = shutterpipe_file_system_type(path)
        return ![0x4d44, 0x2011_BAB0, 0x6573_5546].contains(kind)  // MSDOS, EXFAT, FUSE
    }

    /// The first folder between `path` and the capture folder above it (the nearest one
    /// holding `marker`, the catalogue's `.shutterpipe`) that is a symbolic link; nil when
    /// there is none. Links above the capture folder are the machine's own layout and
    /// fine; without a marker, no folder is known to be the capture folder, and none is
    /// checked.
    public static func linkedFolder(above path: String, marker: String = ".shutterpipe") -> String? {
        var folders: [String] = []
        var folder = PathName.parent(path)
        while !folder.isEmpty && folder != "/" {
            if access(folder + "/" + marker, F_OK) == 0 { break }
            folders.append(folder)
            folder = PathName.parent(folder)
        }
        guard !folder.isEmpty && folder != "/" else { return nil }
        return folders.first { folder in
            var info = stat()
            return lstat(folder, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
        }
    }
}
