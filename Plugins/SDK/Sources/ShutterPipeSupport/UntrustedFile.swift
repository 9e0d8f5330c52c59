#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CShutterPipeSupport
import Foundation

/// A file that someone else may have put where we read it: a hot folder an FTP account
/// writes, a memory card, a sidecar an editor or a synced folder left, a ledger in a
/// folder others can write. The one rule for such a file:
///
/// - it is opened **once**, without following a symbolic link (`O_NOFOLLOW`) and without
///   blocking (`O_NONBLOCK`: a FIFO or a device under a photo's name cannot hang us);
/// - the descriptor is checked (`fstat`): a regular file, with at most ``Limits/links``
///   names (a hard link to a file of ours is as good as a symbolic one to an attacker), of
///   at most ``Limits/bytes`` bytes;
/// - it is read through that descriptor, never again by its name, and never past the limit
///   (a size in a header, or a file that grows while it is read, is a claim, not a budget).
///
/// Names are bytes: ``open(_:in:limits:)`` takes the name as the directory entry holds it,
/// so a name that is not UTF-8 is opened as itself, never as a lookalike.
public final class UntrustedFile {
    /// What a file may be.
    public struct Limits: Sendable, Equatable {
        /// The largest size taken, in bytes.
        public var bytes: Int64
        /// How many names (hard links) the file may have; 1 by default.
        public var links: Int

        public init(bytes: Int64, links: Int = 1) {
            self.bytes = bytes
            self.links = links
        }
    }

    /// The open descriptor: read-only, or append-only for ``openForAppending(_:in:limits:mode:)``.
    public let descriptor: Int32
    /// What `fstat` said of it when it was opened.
    public let status: stat
    private let limits: Limits
    private let shown: String

    /// The size when it was opened.
    public var size: Int64 { Int64(status.st_size) }
    /// The file's identity, to tell later whether a name still holds this file.
    public var identity: FileIdentity { FileIdentity(status) }

    private init(descriptor: Int32, status: stat, limits: Limits, shown: String) {
        self.descriptor = descriptor
        self.status = status
        self.limits = limits
        self.shown = shown
    }

    deinit { close(descriptor) }

    /// Opens `name` (bytes, no NUL) in the folder `directory` (a descriptor, or
    /// `AT_FDCWD` for a path) for reading.
    public static func open(_ name: [UInt8], in directory: Int32 = AT_FDCWD, limits: Limits) throws(UntrustedFileError) -> UntrustedFile {
        try opening(name, in: directory, flags: O_RDONLY, mode: 0, limits: limits)
    }

    /// Opens the file at `path` for reading (see ``open(_:in:limits:)``).
    public static func open(_ path: String, limits: Limits) throws(UntrustedFileError) -> UntrustedFile {
        try open(Array(path.utf8), in: AT_FDCWD, limits: limits)
    }

    /// Opens `name` in `directory` for appending, creating it with `mode` when it is not
    /// there: a ledger or journal in a folder others may write. The same checks as for
    /// reading: a link, a FIFO, a device or a file with several names is refused.
    public static func openForAppending(_ name: [UInt8], in directory: Int32 = AT_FDCWD, limits: Limits, mode: mode_t = 0o600) throws(UntrustedFileError) -> UntrustedFile {
        try opening(name, in: directory, flags: O_WRONLY | O_APPEND | O_CREAT, mode: mode, limits: limits)
    }

    private static func opening(_ name: [UInt8], in directory: Int32, flags: Int32, mode: mode_t, limits: Limits) throws(UntrustedFileError) -> UntrustedFile {
        let shown = PathName.shown(name)
        guard !name.isEmpty, !name.contains(0) else { throw UntrustedFileError(shown, .missing) }
        var descriptor: Int32 = -1
        repeat {
            descriptor = FolderCalls.withCString(name) { openat(directory, $0, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode) }
        } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else {
            let code = errno
            switch code {
            case ENOENT: throw UntrustedFileError(shown, .missing)
            case ELOOP: throw UntrustedFileError(shown, .symbolicLink)
            case ENXIO: throw UntrustedFileError(shown, .notRegular("a FIFO nobody reads"))
            case EISDIR: throw UntrustedFileError(shown, .notRegular("a folder"))
            default: throw UntrustedFileError(shown, .unreadable(code))
            }
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            close(descriptor)
            throw UntrustedFileError(shown, .unreadable(code))
        }
        if let refusal = refusal(info, limits) {
            close(descriptor)
            throw UntrustedFileError(shown, refusal)
        }
        return UntrustedFile(descriptor: descriptor, status: info, limits: limits, shown: shown)
    }

    /// Why a file of this status is not taken; nil when it is.
    static func refusal(_ info: stat, _ limits: Limits) -> UntrustedFileError.Reason? {
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFLNK: return .symbolicLink
        case S_IFDIR: return .notRegular("a folder")
        case S_IFIFO: return .notRegular("a FIFO")
        case S_IFSOCK: return .notRegular("a socket")
        case S_IFCHR, S_IFBLK: return .notRegular("a device")
        default: return .notRegular("not a regular file")
        }
        if Int(info.st_nlink) > limits.links { return .hardLinked(Int(info.st_nlink)) }
        if Int64(info.st_size) > limits.bytes { return .tooLarge(size: Int64(info.st_size), limit: limits.bytes) }
        return nil
    }

    /// How much of a file is holes, when it is mostly holes: a sparse file of a gigabyte
    /// costs its writer nothing and whoever reads it its whole size. Over 1 MB, with less
    /// than an eighth of it written; nil otherwise (cameras and editors write every byte).
    public static func sparseness(_ status: stat) -> (size: Int64, written: Int64)? {
        let size = Int64(status.st_size), written = Int64(status.st_blocks) * 512
        return size > 1_000_000 && written < size / 8 ? (size, written) : nil
    }

    /// Every byte, through the descriptor, at most ``Limits/bytes``: a file that grew past
    /// the limit while it was read is refused, one that shrank gives what it has. The
    /// bytes are read straight into the buffer the `Data` keeps (no zero fill, no copy;
    /// a photo's in huge pages, ``PhotoMemory``).
    public func read() throws(UntrustedFileError) -> Data {
        guard var buffer = PhotoMemory(capacity: Int(min(size, limits.bytes))) else { throw UntrustedFileError(shown, .unreadable(ENOMEM)) }
        var filled = 0
        while true {
            // The buffer may be larger than asked (a photo's comes in 2 MiB steps): never
            // past the limit.
            let room = Int(min(Int64(buffer.capacity), limits.bytes))
            if filled == room {
                // Grown since the fstat? One byte more says; past the limit is a refusal.
                var probe: UInt8 = 0
                let more = pread(descriptor, &probe, 1, off_t(filled))
                if more < 0 && errno == EINTR { continue }
                if more <= 0 { break }
                guard Int64(filled) < limits.bytes else {
                    throw UntrustedFileError(shown, .tooLarge(size: Int64(filled) + 1, limit: limits.bytes))
                }
                guard buffer.grow(to: Int(min(Int64(filled) * 2 + 65_536, limits.bytes))) else { throw UntrustedFileError(shown, .unreadable(ENOMEM)) }
            }
            let count = pread(descriptor, buffer.base + filled, room - filled, off_t(filled))
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw UntrustedFileError(shown, .unreadable(errno)) }
            if count == 0 { break }
            filled += count
        }
        return buffer.data(count: filled)
    }

    /// Appends `bytes` and fsyncs them (a descriptor from ``openForAppending(_:in:limits:mode:)``).
    public func append(_ bytes: [UInt8]) throws(UntrustedFileError) {
        do { try DescriptorIO.writeAll(bytes, to: descriptor) } catch { throw UntrustedFileError(shown, .unreadable(error.code)) }
        guard fsync(descriptor) == 0 else { throw UntrustedFileError(shown, .unreadable(errno)) }
    }

    /// The whole file at `path`, under `limits`, opened once without following a link.
    public static func contents(of path: String, limits: Limits) throws(UntrustedFileError) -> Data {
        try open(path, limits: limits).read()
    }
}

/// A file's device and inode: whether a name still holds the file that was read.
public struct FileIdentity: Sendable, Hashable {
    public var device: UInt64
    public var inode: UInt64

    public init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }
}

/// Why a file from outside was not taken.
public struct UntrustedFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable {
        /// Not there (gone, or never was).
        case missing
        /// A symbolic link: never followed.
        case symbolicLink
        /// A FIFO, a folder, a device, a socket (the words say which).
        case notRegular(String)
        /// Over the size limit.
        case tooLarge(size: Int64, limit: Int64)
        /// A file with several names: one of them may be a file of ours.
        case hardLinked(Int)
        /// A read or open that failed with this `errno`.
        case unreadable(Int32)
    }

    /// The name, escaped for a log line.
    public var name: String
    public var reason: Reason

    public init(_ name: String, _ reason: Reason) {
        self.name = name
        self.reason = reason
    }

    /// What is wrong, in words, without the name.
    public var why: String {
        switch reason {
        case .missing: return "it is not there"
        case .symbolicLink: return "it is a symbolic link (never followed)"
        case .notRegular(let kind): return "it is \(kind), not a regular file"
        case .tooLarge(let size, let limit): return "it has \(formatByteCount(size)), over the limit of \(formatByteCount(limit))"
        case .hardLinked(let count): return "it has \(count) names (hard links); only a file with one is taken"
        case .unreadable(let code): return String(cString: strerror(code))
        }
    }

    public var description: String { "'\(name)': \(why)" }
}

/// Calls on names relative to a folder's descriptor, with names as bytes.
public enum FolderCalls {
    /// Moves `name` of the folder `from` to `target` in the folder `to`, never replacing a
    /// file (`renameat2(RENAME_NOREPLACE)`, else a hard link and an unlink): 0, or -1
    /// with errno (EEXIST when `target` is taken, EXDEV across file systems).
    public static func renameWithoutReplacing(_ name: [UInt8], in from: Int32, to target: [UInt8], in to: Int32) -> Int32 {
        withCStrings(name, target) { shutterpipe_renameat_noreplace(from, $0, to, $1) }
    }

    /// Runs `body` with `first` and `second` as C strings.
    public static func withCStrings<Result>(_ first: [UInt8], _ second: [UInt8], _ body: (UnsafePointer<CChar>, UnsafePointer<CChar>) -> Result) -> Result {
        (first + [0]).withUnsafeBufferPointer { a in
            (second + [0]).withUnsafeBufferPointer { b in
                a.withMemoryRebound(to: CChar.self) { a in b.withMemoryRebound(to: CChar.self) { b in body(a.baseAddress!, b.baseAddress!) } }
            }
        }
    }

    /// Runs `body` with `name` as a C string.
    public static func withCString<Result>(_ name: [UInt8], _ body: (UnsafePointer<CChar>) -> Result) -> Result {
        (name + [0]).withUnsafeBufferPointer { a in a.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) } }
    }
}
