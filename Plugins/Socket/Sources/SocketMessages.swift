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
    /// `/tmp/shutterpipe-UID/shutterpipe.sock` (``fallbackFolder``).
    public static var defaultPath: String { SessionSocket.defaultPath }

    /// Where the socket goes without `XDG_RUNTIME_DIR` (cron, system units, `su`): a
    /// folder of this user's alone, mode 0700, so no other user can put a socket of theirs
    /// at the path this user's clients will try.
    public static var fallbackFolder: String { "/tmp/shutterpipe-\(getuid())" }

    /// Makes ``fallbackFolder`` if it is missing, and checks that it is a folder (not a
    /// link) of this user's that nobody else can enter; throws with the fix otherwise.
    public static func preparePrivateFolder(_ folder: String) throws(ShutterError) {
        if mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw ShutterError(.permissionDenied, "socket trigger: cannot create '\(folder)': \(String(cString: strerror(errno)))",
                               fix: "set 'path' to a socket in a folder of your own")
        }
        var info = stat()
        guard lstat(folder, &info) == 0 else {
            throw ShutterError(.permissionDenied, "socket trigger: cannot check '\(folder)': \(String(cString: strerror(errno)))",
                               fix: "set 'path' to a socket in a folder of your own")
        }
        let isFolder = info.st_mode & S_IFMT == S_IFDIR
        guard isFolder, info.st_uid == geteuid(), info.st_mode & 0o077 == 0 else {
            let what = !isFolder ? "is not a folder" : info.st_uid != geteuid() ? "belongs to \(UnixSocket.userName(info.st_uid))"
                : "can be entered by other users (mode \(String(info.st_mode & 0o777, radix: 8)))"
            throw ShutterError(.permissionDenied, "socket trigger: '\(folder)' \(what); another user could catch this session's clients there",
                               fix: "remove '\(folder)' (as its owner or root), or set XDG_RUNTIME_DIR or 'path' to a folder of your own")
        }
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

/// A request: `{"event":"capture","id":7}`; or a settings request,
/// `{"set":{"iso":"400"},"id":8}` (an object's changes are applied in key order; a list,
/// `{"set":["iso=400","shutterspeed=1/200"]}`, in its own order) or `{"get":["iso"]}`
/// (`{"get":[]}` for every setting), each with an optional `"camera"`. `id` is optional
/// and echoed in the reply.
public struct SocketRequest: Codable, Sendable, Equatable {
    /// The request name, mapped to an event by the trigger's `map:`.
    public var event: String?
    /// Settings to change, as `KEY=VALUE`, in order.
    public var set: [String]?
    /// Settings to read; empty for every one.
    public var get: [String]?
    /// The camera a settings request is for, when the session has several; every camera
    /// when absent.
    public var camera: String?
    /// A session label to set (empty clears it): `{"label":"ORDER-1234"}`.
    public var label: String?
    /// Anything the client wants echoed back.
    public var id: JSONValue?

    /// Creates an event request.
    public init(event: String, id: JSONValue? = nil) {
        self.event = event
        self.id = id
    }

    /// Creates a label request.
    public init(label: String, id: JSONValue? = nil) {
        self.label = label
        self.id = id
    }

    /// Creates a settings request: changes when `set` is given, else a read of `get`.
    public init(set: [SettingChange]? = nil, get: [String]? = nil, camera: String? = nil, id: JSONValue? = nil) {
        self.set = set?.map { "\($0.key)=\($0.value)" }
        self.get = set == nil ? (get ?? []) : nil
        self.camera = camera
        self.id = id
    }

    /// What a request line asks.
    public enum Parsed: Sendable, Equatable {
        /// An event, by the name the client gave.
        case event(String, id: JSONValue?)
        /// A settings request.
        case settings(SettingsRequest.Action, camera: String?, id: JSONValue?)
        /// Marks for a shot of the catalogue, by its catalogue id.
        case mark(Int, camera: String?, [ShotMarkChange], id: JSONValue?)
        /// A session label (empty: clear it).
        case label(String, id: JSONValue?)
        /// A sequence the config plans, by name.
        case sequence(String, id: JSONValue?)
        /// Not a request: the error reply to send back.
        case rejected(SocketReply)
    }

    /// Reads one request line.
    public static func parse(_ line: Data) -> Parsed {
        guard let object = try? JSONDecoder().decode([String: JSONValue].self, from: line) else {
            return .rejected(SocketReply(error: "malformed request: expected a JSON object such as {\"event\":\"capture\"}"))
        }
        let id = object["id"].flatMap { $0 == .null ? nil : $0 }
        let camera = object["camera"]?.string
        if object["camera"] != nil, object["camera"] != .null, camera == nil {
            return .rejected(SocketReply(error: "\"camera\" must be a camera's name (a string)", id: id))
        }
        if let mark = object["mark"] { return parseMark(mark, object, id: id) }
        if let label = object["label"] {
            guard let text = label == .null ? "" : label.string else {
                return .rejected(SocketReply(error: "\"label\" takes a string, such as \"ORDER-1234\" (\"\" clears it)", id: id))
            }
            return .label(text, id: id)
        }
        if let sequence = object["sequence"] {
            guard let name = sequence.string, !name.isEmpty else {
                return .rejected(SocketReply(error: "\"sequence\" takes the name of a sequence the config plans, such as \"stack\"", id: id))
            }
            return .sequence(name, id: id)
        }
        if let set = object["set"] {
            let (changes, problem) = settingChanges(set)
            if let problem { return .rejected(SocketReply(error: problem, id: id)) }
            return .settings(.change(changes), camera: camera, id: id)
        }
        if let get = object["get"] {
            switch get {
            case .null: return .settings(.read([]), camera: camera, id: id)
            case .string(let key): return .settings(.read(key.isEmpty ? [] : [key]), camera: camera, id: id)
            case .array(let keys):
                let names = keys.compactMap(\.string)
                guard names.count == keys.count else { return .rejected(SocketReply(error: "\"get\" takes a list of setting names, such as [\"iso\"]", id: id)) }
                return .settings(.read(names), camera: camera, id: id)
            default:
                return .rejected(SocketReply(error: "\"get\" takes a list of setting names, such as [\"iso\"], or [] for every setting", id: id))
            }
        }
        guard let event = object["event"]?.string else {
            return .rejected(SocketReply(error: "missing \"event\": send {\"event\":\"capture\"}, enter or exit; {\"set\":{\"iso\":\"400\"}} or {\"get\":[]} for camera settings; {\"label\":\"ORDER-1234\"} for the session label; {\"sequence\":\"stack\"} for a sequence; or {\"mark\":12,\"rating\":4} for a shot", id: id))
        }
        return .event(event, id: id)
    }


    /// The changes a `set` value names: an object (in key order), or a list of
    /// `KEY=VALUE` strings (in its order). Values may be strings, numbers or booleans.
    static func settingChanges(_ value: JSONValue) -> (changes: [SettingChange], problem: String?) {
        let usage = "\"set\" takes an object such as {\"iso\":\"400\"} or a list such as [\"iso=400\",\"shutterspeed=1/200\"]"
        var changes: [SettingChange] = []
        switch value {
        case .object(let entries):
            for (key, value) in entries.sorted(by: { $0.key < $1.key }) {
                guard let text = value.scalarText, !key.isEmpty, !text.isEmpty else { return ([], "\(usage); '\(key)' has no value") }
                changes.append(SettingChange(key: key, value: text))
            }
        case .array(let items):
            for item in items {
                guard let text = item.string, let change = SettingChange(parsing: text) else { return ([], usage) }
                changes.append(change)
            }
        default:
            return ([], usage)
        }
        guard !changes.isEmpty else { return ([], "\(usage); it names no setting") }
        return (changes, nil)
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
    /// The shot's identity (``ShotID``, `RUN#NUMBER`), as the catalogue knows it.
    public var shotID: String?
    /// Notes that did not stop the photo being stored.
    public var warnings: [String]?
    /// Why the line was not a request, or why the session refused the client.
    public var error: String?
    /// For a settings request: each setting as applied or read; for a refused change, the
    /// settings it named with their choices.
    public var settings: [CameraSetting]?
    /// For a mark request: the shot's marks as the catalogue holds them afterwards.
    public var marked: MarkedShot?
    /// For a label request: the session's label now (absent: none); for a shot, the label
    /// it carries.
    public var label: String?

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
        shotID = answer.shot?.description
        warnings = answer.warnings.isEmpty ? nil : answer.warnings
        label = answer.label
    }

    /// The reply to a sequence once it ended: `event` is `sequence`, `state` is absent;
    /// each frame was replied to before it, as a capture.
    public init(_ answer: SequenceAnswer, id: JSONValue?) {
        self.id = id
        event = "sequence"
        summary = answer.summary
        cause = answer.failure?.cause.rawValue
        message = answer.failure?.description
    }

    /// The reply to a label request: `event` is `label`, `state` is absent.
    public init(_ answer: LabelAnswer, id: JSONValue?) {
        self.id = id
        event = "label"
        summary = answer.summary
        cause = answer.failure?.cause.rawValue
        message = answer.failure?.description
        label = answer.label
    }

    /// The reply to a settings request: `event` is `set` or `get`, `state` is absent.
    public init(_ answer: SettingsAnswer, id: JSONValue?) {
        self.id = id
        switch answer.request.action {
        case .change: event = "set"
        case .read: event = "get"
        @unknown default: event = "settings"  // a newer contract's request: named by its summary
        }
        summary = answer.summary
        ms = Int(answer.duration.milliseconds.rounded())
        cause = answer.failure?.cause.rawValue
        message = answer.failure?.description
        settings = answer.settings.isEmpty ? nil : answer.settings
    }

    /// An error reply; the session carries on.
    public init(error: String, id: JSONValue? = nil) {
        self.id = id
        self.error = error
    }

    /// Whether the state counts as success for the event it answers.
    public var isSuccess: Bool {
        guard error == nil else { return false }
        if event == "set" || event == "get" || event == "label" || event == "sequence" { return cause == nil }
        guard let state else { return false }
        switch event {
        case "capture": return state == ShutterState.photoSuccess.rawValue
        case "enter": return state == ShutterState.enteredPhotoMode.rawValue
        case "exit": return state == ShutterState.exitedOrUnableToEnter.rawValue && cause == nil
        case "unknown": return false  // a name the session's map does not know
        default: return cause == nil
        }
    }
}
