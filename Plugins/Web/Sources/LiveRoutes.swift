import Foundation
import ShutterPipeKit

/// The operator's routes for framing and focusing: each camera's live view, its settings
/// (read and changed through the coordinator, between shots, as `shutterpipe set` does),
/// and its lens drive.
///
/// - `GET /live.mjpg` (the first camera), `GET /live/{camera}.mjpg`
/// - `GET /api/settings`: every camera's settings, with their values and choices, and
///   which lens buttons each has
/// - `POST /api/settings` `{"camera": "left", "changes": {"iso": "400"}}`: one camera,
///   or every camera when `camera` is left out (all or none; a refusal names the cameras)
/// - `POST /api/lens` `{"camera": "left", "move": "near", "step": 2}` or
///   `{"camera": "left", "autofocus": true}`
struct LiveRoutes {
    let trigger: WebTrigger

    /// The answer, or `nil` for another route.
    func answer(_ request: HTTPRequest) -> HTTPResponse? {
        switch (request.method, request.path) {
        case ("GET", "/live.mjpg"): return stream(nil)
        case ("GET", let path) where path.hasPrefix("/live/") && path.hasSuffix(".mjpg"):
            let name = String(path.dropFirst("/live/".count).dropLast(".mjpg".count))
            return stream(name.removingPercentEncoding ?? name)
        case ("GET", "/api/settings"): return settings()
        case ("POST", "/api/settings"): return change(request)
        case ("POST", "/api/lens"): return lens(request)
        case (_, "/api/settings"), (_, "/api/lens"): return .error(405, "\(request.method) is not allowed on \(request.path)")
        default: return nil
        }
    }

    private func stream(_ camera: String?) -> HTTPResponse {
        let views = trigger.liveViews
        guard views.available else {
            return .error(404, "live view: this session's backend has none", fix: "the last shot is at /api/photos/latest/preview.jpg")
        }
        guard let hub = views.hub(camera) else {
            return .error(404, "live view: no camera named '\(camera ?? "")' in this session", fix: "its cameras: \(views.hubs.map(\.camera).joined(separator: ", "))")
        }
        if let reason = hub.unavailableAfterProbe() {
            return .error(501, "live view: \(reason)", fix: "frame with the camera's own screen or viewfinder; the last shot is at /api/photos/latest/preview.jpg")
        }
        return HTTPResponse(status: 200, contentType: "multipart/x-mixed-replace; boundary=\(LiveViewHub.boundary)",
                            headers: [("Cache-Control", "no-store")], body: .stream(hub.watch()))
    }

    // MARK: Settings

    private func settings() -> HTTPResponse {
        guard let answer = trigger.settings(SettingsRequest(.read([]), origin: "web")) else { return Self.noAnswer }
        if let failure = answer.failure { return Self.refused(failure, answer.settings) }
        let first = trigger.liveViews.hubs.first?.camera ?? "camera"
        var order: [String] = []
        var byCamera: [String: [CameraSetting]] = [:]
        for setting in answer.settings {
            let name = setting.camera ?? first
            if byCamera[name] == nil { order.append(name) }
            byCamera[name, default: []].append(setting)
        }
        return .json(["cameras": order.map { name -> [String: Any] in
            let settings = byCamera[name] ?? []
            return ["name": name, "settings": settings.map(Self.json), "lens": LensDrive(settings).json]
        }])
    }

    private func change(_ request: HTTPRequest) -> HTTPResponse {
        guard let body = try? JSONSerialization.jsonObject(with: request.body) as? [String: Any],
              let changes = body["changes"] as? [String: Any], !changes.isEmpty else {
            return .error(400, "the body must be JSON: {\"camera\": NAME (leave it out for every camera), \"changes\": {KEY: VALUE, …}}")
        }
        let list = changes.sorted { $0.key < $1.key }.map { SettingChange(key: $0.key, value: "\($0.value)") }
        return apply(list, camera: body["camera"] as? String, client: request.client)
    }

    private func apply(_ changes: [SettingChange], camera: String?, client: String) -> HTTPResponse {
        guard let answer = trigger.settings(SettingsRequest(.change(changes), camera: camera, origin: "web \(client)")) else { return Self.noAnswer }
        if let failure = answer.failure { return Self.refused(failure, answer.settings) }
        return .json(["applied": answer.settings.map(Self.json), "summary": answer.summary])
    }

    private func lens(_ request: HTTPRequest) -> HTTPResponse {
        guard let body = try? JSONSerialization.jsonObject(with: request.body) as? [String: Any] else {
            return .error(400, "the body must be JSON: {\"camera\": NAME, \"move\": \"near\" or \"far\", \"step\": 1 to 3} or {\"camera\": NAME, \"autofocus\": true}")
        }
        let camera = body["camera"] as? String
        if camera == nil, trigger.liveViews.hubs.count > 1 {
            return .error(400, "name the camera whose lens to drive: \"camera\": one of \(trigger.liveViews.hubs.map(\.camera).joined(separator: ", "))")
        }
        guard let read = trigger.settings(SettingsRequest(.read(LensDrive.keys), camera: camera, origin: "web")) else { return Self.noAnswer }
        // A camera that lacks some of the keys refuses the read, giving those it has.
        if let failure = read.failure, read.settings.isEmpty, !failure.message.contains("has no setting") {
            return Self.refused(failure, [])
        }
        let drive = LensDrive(read.settings.filter { camera == nil || $0.camera == nil || $0.camera == camera })
        let change: Result<SettingChange, ShutterError>
        if body["autofocus"] as? Bool == true {
            change = drive.autofocusChange
        } else if let move = (body["move"] as? String).flatMap(LensDrive.Direction.init(rawValue:)) {
            change = drive.change(move, step: body["step"] as? Int ?? 1)
        } else {
            return .error(400, "say \"move\": \"near\" or \"far\" (with \"step\": 1 to 3), or \"autofocus\": true")
        }
        switch change {
        case .success(let change): return apply([change], camera: camera, client: request.client)
        case .failure(let error): return Self.refused(error, [])
        }
    }

    private static let noAnswer = HTTPResponse.error(503, "no answer: the session is stopping or did not answer in time")

    /// A refused or failed settings request: 409 for a refusal (nothing changed), 503 when
    /// the camera could not be reached; with the message, its fix and the settings named.
    private static func refused(_ failure: ShutterError, _ settings: [CameraSetting]) -> HTTPResponse {
        var object: [String: Any] = ["error": failure.message, "cause": failure.cause.rawValue, "settings": settings.map(json)]
        if let fix = failure.fix { object["fix"] = fix }
        return .json(object, status: failure.cause == .invalidConfiguration ? 409 : 503)
    }

    static func json(_ setting: CameraSetting) -> [String: Any] {
        var object: [String: Any] = ["key": setting.key, "label": setting.label, "kind": setting.kind.rawValue, "value": setting.value,
                                     "readOnly": setting.readOnly, "section": setting.section ?? NSNull(), "camera": setting.camera ?? NSNull()]
        if !setting.choices.isEmpty { object["choices"] = setting.choices }
        if let range = setting.range { object["range"] = ["minimum": range.minimum, "maximum": range.maximum, "step": range.step] }
        return object
    }
}
