#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import SocketTrigger

/// Why `shutterpipe trigger` could not get an answer.
struct SocketClientError: Error, CustomStringConvertible {
    var description: String
}

/// A reply, wrapped so it can cross from the client's thread.
struct SocketReply: @unchecked Sendable {  // a parsed JSON object, read-only after parsing
    var object: [String: Any]
}

/// The client side of the socket trigger: one request, one reply.
enum SocketClient {
    static func send(_ event: String, to path: String, timeout: Duration) throws(SocketClientError) -> SocketReply {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw SocketClientError(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            throw SocketClientError(description: "no shutterpipe session listens on \(path) (\(String(cString: strerror(errno)))); start `shutterpipe run` with a socket trigger, or pass --socket")
        }
        var seconds = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &seconds, socklen_t(MemoryLayout<timeval>.size))
        writeAll(Array(SocketProtocol.request(event)), to: descriptor)
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !received.contains(UInt8(ascii: "\n")) {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                throw SocketClientError(description: "no answer within \(formatDuration(timeout))")
            }
            if count <= 0 { throw SocketClientError(description: "the session closed the connection before answering") }
            received.append(contentsOf: buffer[0..<count])
        }
        let line = received.prefix { $0 != UInt8(ascii: "\n") }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any] else {
            throw SocketClientError(description: "unreadable answer: \(String(decoding: line, as: UTF8.self).prefix(200))")
        }
        return SocketReply(object: object)
    }
}
