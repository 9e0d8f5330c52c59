#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CShutterPipeSupport
import Foundation

/// Unix-domain stream sockets: addresses with the length guard, connecting, listening.
public enum UnixSocket {
    /// The longest path a socket address holds (`sun_path` is 108 bytes with its NUL).
    public static let maximumPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// The address of `path`. A longer path than ``maximumPathLength`` is an error, never
    /// cut short: a cut path names another socket.
    public static func address(_ path: String) throws(SystemError) -> sockaddr_un {
        let bytes = Array(path.utf8)
        guard bytes.count <= maximumPathLength else {
            throw SystemError("socket path '\(path)' is longer than \(maximumPathLength) bytes", code: ENAMETOOLONG)
        }
        guard !bytes.contains(0) else { throw SystemError("socket path '\(path)' holds a NUL byte", code: EINVAL) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// A connected stream socket to `path` (close-on-exec).
    public static func connect(to path: String) throws(SystemError) -> Int32 {
        var address = try address(path)
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw SystemError("socket") }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            let failure = SystemError("connect to '\(path)'")
            close(descriptor)
            throw failure
        }
        return descriptor
    }

    /// The user ID of the process at the other end of `descriptor` (`SO_PEERCRED`).
    public static func peerUser(of descriptor: Int32) throws(SystemError) -> uid_t {
        var uid: UInt32 = 0
        guard shutterpipe_peer_uid(descriptor, &uid) == 0 else { throw SystemError("read the peer's credentials") }
        return uid_t(uid)
    }

    /// The name of user `uid`, or its number.
    public static func userName(_ uid: uid_t) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "uid \(uid)" }
        return String(cString: name)
    }

    /// A listening socket at `path` whose file has mode 0600 (this user only). A stale
    /// socket file, one nobody listens on, is replaced; a live one is an error. A file
    /// there that belongs to another user is never touched (`EPERM`): that user may be
    /// squatting the path to catch this session's clients.
    public static func listen(at path: String, backlog: Int32 = 64) throws(SystemError) -> Int32 {
        _ = try address(path)  // the length guard
        var existing = stat()
        if lstat(path, &existing) == 0 && existing.st_uid != geteuid() {
            throw SystemError("'\(path)' belongs to \(userName(existing.st_uid)), not to this user", code: EPERM)
        }
        if FileManager.default.fileExists(atPath: path) {
            if let probe = try? connect(to: path) {
                close(probe)
                throw SystemError("another program already listens on '\(path)'", code: EADDRINUSE)
            }
            unlink(path)
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw SystemError("socket") }
        // The socket file is created 0600. Not with umask() around bind: the umask is the
        // process's, and every file and folder another thread made meanwhile got it too (a
        // folder created 0600 cannot be entered by its owner).
        guard shutterpipe_bind_unix_masked(descriptor, path, 0o177) == 0 else {
            let failure = SystemError("cannot create socket '\(path)'")
            close(descriptor)
            throw failure
        }
        chmod(path, 0o600)
        guard Glibc.listen(descriptor, backlog) == 0 else {
            let failure = SystemError("listen on '\(path)'")
            close(descriptor)
            throw failure
        }
        return descriptor
    }
}
