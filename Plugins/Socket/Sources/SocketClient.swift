#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// Why a request got no reply.
public struct SocketClientError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, with the fix where one is known.
    public var description: String
}

/// The client side of the socket trigger: one request, one reply.
public enum SocketClient {
    /// Sends `request` to the session listening at `path` and waits up to `timeout` for
    /// its reply. Blocks: call it on a thread of your own.
    public static func send(_ request: SocketRequest, to path: String, timeout: Duration) throws(SocketClientError) -> SocketReply {
        let descriptor: Int32
        do { descriptor = try UnixSocket.connect(to: path) } catch {
            if error.code == ENAMETOOLONG || error.code == EINVAL { throw SocketClientError(description: "\(error.operation); pass a shorter --socket") }
            throw SocketClientError(description: "no shutterpipe session listens on \(path) (\(error.reason)); start `shutterpipe run` with a socket trigger, or pass --socket")
        }
        defer { close(descriptor) }
        // Only this user's session, or root's, is trusted with a request and believed.
        let server = try? UnixSocket.peerUser(of: descriptor)
        guard let server, server == getuid() || server == 0 else {
            let owner = server.map(UnixSocket.userName) ?? "an unknown user"
            throw SocketClientError(description: "the socket \(path) is served by \(owner), not by you; nothing was sent. Check who runs that session, or pass --socket with your own")
        }
        var seconds = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &seconds, socklen_t(MemoryLayout<timeval>.size))
        do { try DescriptorIO.writeAll(SocketProtocol.line(request), to: descriptor) } catch {
            throw SocketClientError(description: "the session closed the connection before the request was sent (\(error.reason))")
        }
        var reply: Data?
        let end = LineReader.forEachLine(in: descriptor) { line in
            reply = line
            return false
        }
        guard let line = reply else {
            if case .failed(let failure) = end, failure.code == EAGAIN || failure.code == EWOULDBLOCK {
                throw SocketClientError(description: "no answer within \(formatDuration(timeout))")
            }
            throw SocketClientError(description: "the session closed the connection before answering")
        }
        guard let decoded = try? JSONDecoder().decode(SocketReply.self, from: line) else {
            throw SocketClientError(description: "unreadable answer: \(String(decoding: line, as: UTF8.self).prefix(200))")
        }
        return decoded
    }
}
