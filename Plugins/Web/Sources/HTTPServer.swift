#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CWebServer
import Foundation
import ShutterPipeSupport
import ShutterPipeKit
import Synchronization

/// One HTTP request, as the routes see it.
struct HTTPRequest: Sendable {
    var method: String
    var path: String
    var query: [String: String]
    var headers: [String: String]  // lower-case names
    var body: Data
    var bodyTooLarge: Bool
    var client: String
}

/// What a route answers.
struct HTTPResponse: Sendable {
    var status: Int
    var contentType: String
    var headers: [(String, String)] = []
    var body: Body

    enum Body: Sendable {
        case bytes(Data)
        /// Written as it comes, until the stream ends (server-sent events, MJPEG).
        case stream(any HTTPStream)
    }

    static func json(_ object: Any, status: Int = 200) -> HTTPResponse {
        let data = JSONText.data(object)
        return HTTPResponse(status: status, contentType: "application/json", body: .bytes(data + Data("\n".utf8)))
    }

    /// An image of a shot: its bytes change only with the shot's file, so a page may keep it.
    static func image(_ data: Data, type: String) -> HTTPResponse {
        HTTPResponse(status: 200, contentType: type, headers: [("Cache-Control", "private, max-age=3600")], body: .bytes(data))
    }

    static func error(_ status: Int, _ message: String, fix: String? = nil) -> HTTPResponse {
        var object: [String: Any] = ["error": message]
        if let fix { object["fix"] = fix }
        return json(object, status: status)
    }
}

/// A response body written as it is produced. ``next(_:)`` blocks on the connection's own
/// thread until there are bytes, and returns nil when the stream is over.
protocol HTTPStream: AnyObject, Sendable {
    /// The connection's socket, before the first ``next(maximum:)``: a stream may size its
    /// send buffer, see what the client has not yet acknowledged, or notice it has gone.
    func attached(to descriptor: Int32)
    func next(maximum: Int) -> Data?
    /// The connection is gone (the client left, or the stream ended).
    func closed()
}

extension HTTPStream {
    func attached(to descriptor: Int32) {}
}

/// An HTTP server on libmicrohttpd: one thread per connection (its own, never the
/// cooperative pool), bounded connections, an idle timeout and a body limit, so a slow or
/// hostile client cannot stall the session.
final class HTTPServer: Sendable {
    struct Limits: Sendable {
        /// Connections at once, and from one client address: eight addresses that take all
        /// of theirs (slow clients, say) leave half for everyone else.
        var connections: UInt32 = 128
        var perClient: UInt32 = 16
        /// A connection without traffic for this long is closed.
        var idleSeconds: UInt32 = 30
        /// A request (headers and body) that has not arrived whole this long after its
        /// connection opened, or its previous request ended, is closed however it trickles.
        var requestSeconds: UInt32 = 10
        var bodyBytes = 65_536
    }

    /// libmicrohttpd's server, until stopped (only passed back to it).
    private struct Running: @unchecked Sendable { let server: OpaquePointer }
    private let web = Mutex<Running?>(nil)
    /// The handler as libmicrohttpd's context (retained until ``stop()``).
    private nonisolated(unsafe) let context: UnsafeMutableRawPointer
    /// The port it listens on.
    let port: UInt16

    init(host: String, port: UInt16, limits: Limits = Limits(), handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse) throws(ShutterError) {
        var message = [CChar](repeating: 0, count: 256)
        let context = Unmanaged.passRetained(HandlerBox(handler)).toOpaque()
        guard let started = sp_web_start(host, port, limits.connections, limits.perClient, limits.idleSeconds, limits.requestSeconds,
                                         limits.bodyBytes, Self.entry, context,
                                          &message, message.count) else {
            Unmanaged<HandlerBox>.fromOpaque(context).release()
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw ShutterError(.invalidConfiguration, "web: cannot listen on \(host):\(port): \(reason)",
                               fix: reason.contains("in use") ? "another program uses that port: choose another 'listen' port" : "check the 'listen' address")
        }
        web.withLock { $0 = Running(server: started) }
        self.context = context
        self.port = sp_web_port(started)
    }

    /// Lets the responses being answered go out (at most `drain`: a shot's answer to the
    /// request that fired it, say), then ends every connection and waits for their threads.
    /// Blocks: call it from a thread of its own.
    func stop(drain: Duration = .seconds(2)) {
        guard let running = web.withLock({ state -> Running? in defer { state = nil }; return state }) else { return }
        sp_web_stop(running.server, UInt32(drain.inNanoseconds / 1_000_000))
        Unmanaged<HandlerBox>.fromOpaque(context).release()
    }

    private final class HandlerBox: Sendable {
        let handler: @Sendable (HTTPRequest) -> HTTPResponse
        init(_ handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse) { self.handler = handler }
    }

    private static let entry: sp_web_handler = { context, connection, method, url, body, size, tooLarge in
        guard let context, let connection else { return MHD_Result(rawValue: 0)! }
        let box = Unmanaged<HandlerBox>.fromOpaque(context).takeUnretainedValue()
        var address = [CChar](repeating: 0, count: 64)
        sp_web_client_address(connection, &address, address.count)
        let request = HTTPRequest(method: method.map { String(cString: $0) } ?? "GET",
                                  path: url.map { String(cString: $0) } ?? "/",
                                  query: values(connection, MHD_ValueKind(rawValue: 8)!, lowercased: false),
                                  headers: values(connection, MHD_ValueKind(rawValue: 1)!, lowercased: true),
                                  body: body.map { Data(bytes: $0, count: size) } ?? Data(), bodyTooLarge: tooLarge != 0,
                                  client: String(decoding: address.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        return send(box.handler(request), on: connection)
    }

    private static func values(_ connection: OpaquePointer, _ kind: MHD_ValueKind, lowercased: Bool) -> [String: String] {
        final class Collected { var values: [String: String] = [:]; var lowercased = false }
        let collected = Collected()
        collected.lowercased = lowercased
        let pointer = Unmanaged.passUnretained(collected).toOpaque()
        _ = MHD_get_connection_values(connection, kind, { context, _, key, value in
            guard let context, let key else { return MHD_Result(rawValue: 1)! }
            let target = Unmanaged<Collected>.fromOpaque(context).takeUnretainedValue()
            let name = String(cString: key)
            target.values[target.lowercased ? name.lowercased() : name] = value.map { String(cString: $0) } ?? ""
            return MHD_Result(rawValue: 1)!
        }, pointer)
        return collected.values
    }

    private static func send(_ reply: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        let response: OpaquePointer?
        switch reply.body {
        case .bytes(let data):
            response = data.withUnsafeBytes { raw in
                MHD_create_response_from_buffer(raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), MHD_ResponseMemoryMode(rawValue: 2)!)  // MHD_RESPMEM_MUST_COPY
            }
        case .stream(let stream):
            stream.attached(to: sp_web_connection_fd(connection))
            let context = Unmanaged.passRetained(StreamBox(stream)).toOpaque()
            response = MHD_create_response_from_callback(UInt64.max, 16_384, { context, _, buffer, maximum in
                guard let context, let buffer else { return -1 }
                let box = Unmanaged<StreamBox>.fromOpaque(context).takeUnretainedValue()
                guard let chunk = box.stream.next(maximum: maximum), !chunk.isEmpty else { return -1 }  // MHD_CONTENT_READER_END_OF_STREAM
                let count = min(chunk.count, maximum)
                chunk.withUnsafeBytes { raw in if let base = raw.baseAddress { _ = memcpy(buffer, base, count) } }
                return count
            }, context, { context in
                if let context { Unmanaged<StreamBox>.fromOpaque(context).release() }
            })
        }
        guard let response else { return MHD_Result(rawValue: 0)! }
        defer { MHD_destroy_response(response) }
        _ = MHD_add_response_header(response, "Content-Type", reply.contentType)
        _ = MHD_add_response_header(response, "X-Content-Type-Options", "nosniff")
        for (name, value) in reply.headers { _ = MHD_add_response_header(response, name, value) }
        return MHD_queue_response(connection, UInt32(reply.status), response)
    }

    private final class StreamBox {
        let stream: any HTTPStream
        init(_ stream: any HTTPStream) { self.stream = stream }
        deinit { stream.closed() }
    }
}
