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
    /// ``send(_:to:timeout:)`` on a thread of its own (`name` names it), for commands.
    public static func ask(_ request: SocketRequest, to path: String, timeout: Duration, name: String) async -> Result<SocketReply, SocketClientError> {
        await BlockingQueue(label: "shutterpipe.\(name)").run {
            Result { () throws(SocketClientError) -> SocketReply in try send(request, to: path, timeout: timeout) }
        }
    }

    /// Sends `request` to the session listening at `path` and waits up to `timeout` for
    /// its reply. Blocks: call it on a thread of your own.
    public static func send(_ request: SocketRequest, to path: String, timeout: Duration) throws(SocketClientError) -> SocketReply {
        let line: Data
        do { line = try SessionSocket.request(SocketProtocol.line(request), to: path, timeout: timeout) } catch {
            throw SocketClientError(description: error.description)
        }
        guard let decoded = try? JSONDecoder().decode(SocketReply.self, from: line) else {
            throw SocketClientError(description: "unreadable answer: \(String(decoding: line, as: UTF8.self).prefix(200))")
        }
        return decoded
    }
}
