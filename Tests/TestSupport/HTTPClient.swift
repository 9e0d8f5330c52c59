#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeSupport

/// A plain HTTP/1.1 client for tests, over a TCP socket on a thread of its own: enough to
/// drive the `web` trigger without curl (a clean machine may not have it).
public struct HTTPReply: Sendable {
    public var status: Int
    public var headers: [String: String]  // lower-case names
    public var body: Data
    /// The body as JSON, when it is.
    public var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }
}

/// Sends one request to 127.0.0.1:`port` and reads the whole reply (chunked or not).
public func http(_ method: String, _ path: String, port: UInt16, headers: [String: String] = [:], body: Data = Data(),
                 timeout: Duration = .seconds(60)) async throws -> HTTPReply {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            continuation.resume(with: Result { try httpNow(method, path, port: port, headers: headers, body: body, timeout: timeout) })
        }.start()
    }
}

/// Opens `path` and reads its body until `enough` says so (or the timeout): for streams.
public func httpStream(_ path: String, port: UInt16, headers: [String: String] = [:], timeout: Duration = .seconds(30),
                       until enough: @escaping @Sendable (Data) -> Bool) async throws -> Data {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            continuation.resume(with: Result {
                let descriptor = try connectTCP(port)
                defer { close(descriptor) }
                try DescriptorIO.writeAll(Array(requestText("GET", path, headers: headers, body: Data()).utf8), to: descriptor)
                var received = Data()
                let deadline = ContinuousClock.now + timeout
                var buffer = [UInt8](repeating: 0, count: 65_536)
                while ContinuousClock.now < deadline && !enough(received) {
                    var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                    guard poll(&entry, 1, 100) >= 0 else { break }
                    if entry.revents == 0 { continue }
                    let count = read(descriptor, &buffer, buffer.count)
                    if count <= 0 { break }
                    received.append(contentsOf: buffer[0..<count])
                }
                return received
            })
        }.start()
    }
}

private func requestText(_ method: String, _ path: String, headers: [String: String], body: Data) -> String {
    // `Host: 127.0.0.1` unless the test sends its own (a DNS-rebinding page's name, say).
    let host = headers.keys.contains { $0.lowercased() == "host" } ? "" : "Host: 127.0.0.1\r\n"
    var text = "\(method) \(path) HTTP/1.1\r\n\(host)Connection: close\r\nContent-Length: \(body.count)\r\n"
    // A body is JSON, as the page sends it, unless the test says otherwise.
    if !body.isEmpty && !headers.keys.contains(where: { $0.lowercased() == "content-type" }) { text += "Content-Type: application/json\r\n" }
    for (name, value) in headers { text += "\(name): \(value)\r\n" }
    return text + "\r\n"
}

private func connectTCP(_ port: UInt16) throws -> Int32 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw TestSupportError("socket failed") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    guard connected == 0 else {
        close(descriptor)
        throw TestSupportError("cannot connect to 127.0.0.1:\(port): \(String(cString: strerror(errno)))")
    }
    return descriptor
}

private func httpNow(_ method: String, _ path: String, port: UInt16, headers: [String: String], body: Data, timeout: Duration) throws -> HTTPReply {
    let descriptor = try connectTCP(port)
    defer { close(descriptor) }
    var seconds = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &seconds, socklen_t(MemoryLayout<timeval>.size))
    try DescriptorIO.writeAll(Array(requestText(method, path, headers: headers, body: body).utf8) + Array(body), to: descriptor)
    var received = Data()
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = read(descriptor, &buffer, buffer.count)
        if count <= 0 { break }
        received.append(contentsOf: buffer[0..<count])
    }
    guard let split = received.range(of: Data("\r\n\r\n".utf8)) else { throw TestSupportError("no HTTP reply from \(path): \(received.count) bytes") }
    let head = String(decoding: received[..<split.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
    let status = Int(head.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
    var replyHeaders: [String: String] = [:]
    for line in head.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        replyHeaders[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    var content = Data(received[split.upperBound...])
    if replyHeaders["transfer-encoding"]?.lowercased() == "chunked" { content = dechunked(content) }
    return HTTPReply(status: status, headers: replyHeaders, body: content)
}

private func dechunked(_ data: Data) -> Data {
    var result = Data()
    var rest = data[...]
    while let lineEnd = rest.range(of: Data("\r\n".utf8)) {
        let size = Int(String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? "", radix: 16) ?? 0
        if size == 0 { break }
        let start = lineEnd.upperBound
        guard rest.distance(from: start, to: rest.endIndex) >= size else { break }
        let end = rest.index(start, offsetBy: size)
        result.append(rest[start..<end])
        rest = rest[min(rest.index(end, offsetBy: 2, limitedBy: rest.endIndex) ?? rest.endIndex, rest.endIndex)...]
    }
    return result
}

/// Opens `path` and reads its body for `duration`, keeping when each piece arrived: for
/// streams whose timing matters (live view).
public func httpStreamTimed(_ path: String, port: UInt16, for duration: Duration,
                            until enough: @escaping @Sendable ([TimedPiece]) -> Bool = { _ in false }) async throws -> [TimedPiece] {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            continuation.resume(with: Result {
                let descriptor = try connectTCP(port)
                defer { close(descriptor) }
                try DescriptorIO.writeAll(Array(requestText("GET", path, headers: [:], body: Data()).utf8), to: descriptor)
                var pieces: [TimedPiece] = []
                let deadline = ContinuousClock.now + duration
                var buffer = [UInt8](repeating: 0, count: 65_536)
                while ContinuousClock.now < deadline && !enough(pieces) {
                    var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                    guard poll(&entry, 1, 20) >= 0 else { break }
                    if entry.revents == 0 { continue }
                    let count = read(descriptor, &buffer, buffer.count)
                    if count <= 0 { break }
                    pieces.append(TimedPiece(at: .now, data: Data(buffer[0..<count])))
                }
                return pieces
            })
        }.start()
    }
}

/// A piece of a stream and when it arrived.
public struct TimedPiece: Sendable {
    public var at: ContinuousClock.Instant
    public var data: Data
}
