#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// The socket's wire format: one JSON object per line each way. The trigger and its
/// client (`shutterpipe trigger`) share these types, so the two cannot drift apart.
public enum SocketProtocol {
    /// The default socket path: `$XDG_RUNTIME_DIR/shutterpipe.sock`, else
    /// `/tmp/shutterpipe-UID.sock`.
    public static var defaultPath: String {
        if let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return "\(runtime)/shutterpipe.sock"
        }
        return "/tmp/shutterpipe-\(getuid()).sock"
    }

    /// One line of JSON: sorted keys, slashes unescaped, a newline at the end.
    public static func line(_ message: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = (try? encoder.encode(message)) ?? Data("{}".utf8)
        data.append(UInt8(ascii: "\n"))
        return data
    }
}

/// A request: `{"event":"capture","id":7}`. `id` is optional and echoed in the reply.
public struct SocketRequest: Codable, Sendable, Equatable {
    /// The request name, mapped to an event by the trigger's `map:`.
    public var event: String
    /// Anything the client wants echoed back.
    public var id: JSONValue?

    /// Creates a request.
    public init(event: String, id: JSONValue? = nil) {
        self.event = event
        self.id = id
    }

    /// A line read from a client: a request, or the error reply to send back.
    public enum Parsed: Sendable, Equatable {
        case request(SocketRequest)
        case rejected(SocketReply)
    }

    /// Reads one request line.
    public static func parse(_ line: Data) -> Parsed {
        guard let object = try? JSONDecoder().decode([String: JSONValue].self, from: line) else {
            return .rejected(SocketReply(error: "malformed request: expected a JSON object such as {\"event\":\"capture\"}"))
        }
        let id = object["id"].flatMap { $0 == .null ? nil : $0 }
        guard let event = object["event"]?.string else {
            return .rejected(SocketReply(error: "missing \"event\": send {\"event\":\"capture\"}, enter or exit", id: id))
        }
        return .request(SocketRequest(event: event, id: id))
    }
}

/// A reply: the state that answered a request, or an error for a line that was not one.
public struct SocketReply: Codable, Sendable, Equatable {
    /// The request's `id`, echoed.
    public var id: JSONValue?
    /// The event that was answered (`capture`, …).
    public var event: String?
    /// The answering state's name.
    public var state: String?
    /// The line the `stdin` trigger would print.
    public var summary: String?
    /// How long the session took to answer, in milliseconds.
    public var ms: Int?
    /// The failure's cause and message, when it failed.
    public var cause: String?
    public var message: String?
    /// What was stored, for a `photoSuccess`.
    public var files: [String]?
    /// The shot number in this session.
    public var shot: Int?
    /// Notes that did not stop the photo being stored.
    public var warnings: [String]?
    /// Why the line was not a request, or why the session refused the client.
    public var error: String?

    /// The reply to one answered request.
    public init(_ answer: ShutterAnswer, id: JSONValue?) {
        self.id = id
        event = answer.request.event.rawValue
        state = answer.state.rawValue
        summary = answer.summary
        ms = Int(answer.duration.milliseconds.rounded())
        cause = answer.failure?.cause.rawValue
        message = answer.failure?.description
        files = answer.stored.isEmpty ? nil : answer.stored.map(\.location)
        shot = answer.shotNumber
        warnings = answer.warnings.isEmpty ? nil : answer.warnings
    }

    /// An error reply; the session carries on.
    public init(error: String, id: JSONValue? = nil) {
        self.id = id
        self.error = error
    }

    /// Whether the state counts as success for the event it answers.
    public var isSuccess: Bool {
        guard error == nil, let state else { return false }
        switch event {
        case "capture": return state == ShutterState.photoSuccess.rawValue
        case "enter": return state == ShutterState.enteredPhotoMode.rawValue
        case "exit": return state == ShutterState.exitedOrUnableToEnter.rawValue && cause == nil
        default: return cause == nil
        }
    }
}
