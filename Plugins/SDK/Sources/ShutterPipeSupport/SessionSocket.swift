#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit

/// One request line to a running session's socket, and its one reply line: the client
/// side of the `socket` trigger's wire format (JSON lines), shared by its commands and
/// the host's (`shutterpipe shots rate`), so that each checks the session alike.
public enum SessionSocket {
    /// The `socket` trigger's default path: `$XDG_RUNTIME_DIR/shutterpipe.sock`, else
    /// `/tmp/shutterpipe-UID/shutterpipe.sock`.
    public static var defaultPath: String {
        if let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return "\(runtime)/shutterpipe.sock"
        }
        return "/tmp/shutterpipe-\(getuid())/shutterpipe.sock"
    }

    /// Why a request got no reply.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// Nobody listens at the path: no session runs there.
        case noSession(String)
        /// Anything else: the message says what, and the fix.
        case failed(String)

        public var description: String {
            switch self {
            case .noSession(let message), .failed(let message): return message
            }
        }
    }

    /// Sends `line` (one JSON object and a newline) to the session listening at `path`,
    /// and waits up to `timeout` for its reply line. Only a session of this user's, or
    /// root's, is trusted with a request. Blocks: call it on a thread of your own.
    public static func request(_ line: Data, to path: String, timeout: Duration) throws(Failure) -> Data {
        let descriptor: Int32
        do { descriptor = try UnixSocket.connect(to: path) } catch {
            if error.code == ENAMETOOLONG || error.code == EINVAL { throw .failed("\(error.operation); pass a shorter --socket") }
            throw .noSession("no shutterpipe session listens on \(path) (\(error.reason)); start `shutterpipe run` with a socket trigger, or pass --socket")
        }
        defer { close(descriptor) }
        let server = try? UnixSocket.peerUser(of: descriptor)
        guard let server, server == getuid() || server == 0 else {
            let owner = server.map(UnixSocket.userName) ?? "an unknown user"
            throw .failed("the socket \(path) is served by \(owner), not by you; nothing was sent. Check who runs that session, or pass --socket with your own")
        }
        var seconds = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &seconds, socklen_t(MemoryLayout<timeval>.size))
        do { try DescriptorIO.writeAll(line, to: descriptor) } catch {
            throw .failed("the session closed the connection before the request was sent (\(error.reason))")
        }
        var reply: Data?
        let end = LineReader.forEachLine(in: descriptor) { line in
            reply = line
            return false
        }
        guard let reply else {
            if case .failed(let failure) = end, failure.code == EAGAIN || failure.code == EWOULDBLOCK {
                throw .failed("no answer within \(formatDuration(timeout))")
            }
            throw .failed("the session closed the connection before answering")
        }
        return reply
    }
}
