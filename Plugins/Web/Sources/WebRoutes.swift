#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeImaging
import ShutterPipeKit
import ShutterPipeSupport

/// The routes of the `web` trigger. The page uses the same ones as scripts.
struct WebRoutes: Sendable {
    let trigger: WebTrigger

    func answer(_ request: HTTPRequest) -> HTTPResponse {
        var response = route(request)
        // A page's links and images never tell another site where they came from (a token
        // in a URL stays here). (HTTPServer adds `nosniff` to every response.)
        response.headers += [("Referrer-Policy", "no-referrer")]
        return response
    }

    private func route(_ request: HTTPRequest) -> HTTPResponse {
        // Before anything, GETs and streams included: a page of another site whose name
        // resolves here (DNS rebinding) sends its own name.
        guard trigger.options.accepts(host: request.headers["host"]) else {
            trigger.log.warning("web: refused a request from \(request.client) for Host '\(request.headers["host"] ?? "")', not a name of this server")
            return .error(403, "Host '\(request.headers["host"] ?? "")' is not a name of this server",
                          fix: "open the page by its address (http://\(trigger.options.host):\(trigger.port ?? trigger.options.port)/), or add the name to the web trigger's 'hosts'")
        }
        if request.bodyTooLarge { return .error(413, "the request body is too large") }
        // The page itself holds no data: it loads without a token (it carries it after
        // `#`, which no request sends) and asks for the data with it.
        if request.method == "GET", var asset = WebPage.asset(request.path) {
            // Opened as /?token=…: from now on the cookie carries it.
            if trigger.options.token != nil, let token = request.query["token"], let access = trigger.access(token: token) {
                asset.headers.append(WebRole.setCookie(token, for: access.role))
            }
            return asset
        }
        guard let access = trigger.access(request) else { return WebRole.unauthorized }
        let role = access.role
        if let refusal = role.refusal(request, trigger.options) { return refusal }
        if request.method == "POST", let crossSite = crossSite(request) { return crossSite }
        if let shots = CatalogueRoutes(trigger: trigger, access: access).answer(request) { return shots }
        if let live = LiveRoutes(trigger: trigger).answer(request) { return live }
        let path = request.path
        switch (request.method, path) {
        case ("GET", "/api/status"):
            // Nothing of the studio's machine (free disk, batteries, cards) reaches a viewer.
            var object = access.isViewer ? viewerStatus(access) : status()
            object["role"] = role.rawValue
            object["originals"] = access.originals
            object["mayMark"] = role == .operator || trigger.options.viewersMayMark
            object["viewersMayMark"] = trigger.options.viewersMayMark
            return .json(object)
        case ("POST", "/api/session"):
            // The page trades the token of its link for the cookie.
            let token = WebRole.token(of: request)
            var response = HTTPResponse.json(["role": role.rawValue])
            if let token, trigger.options.token != nil { response.headers.append(WebRole.setCookie(token, for: role)) }
            return response
        case ("POST", "/api/label"):
            // The session label (an order number, a subject's code): the next shots carry it.
            guard let body = try? JSONSerialization.jsonObject(with: request.body) as? [String: Any], let text = body["label"] as? String else {
                return .error(400, "the body must be JSON: {\"label\": \"ORDER-1234\"} (\"\" clears it)")
            }
            guard let answer = trigger.label(LabelRequest(text, origin: "web \(request.client)")) else {
                return .error(503, "no answer: the session is stopping or did not answer in time")
            }
            if let failure = answer.failure {
                return .json(["error": failure.message, "cause": failure.cause.rawValue, "fix": failure.fix ?? ""], status: 409)
            }
            return .json(["label": answer.label.map { $0 as Any } ?? NSNull(), "summary": answer.summary] as [String: Any])
        case ("GET", "/api/share.svg"):
            return ShareLink(trigger: trigger, host: request.headers["host"]).svg()
        case ("GET", "/api/share"):
            return ShareLink(trigger: trigger, host: request.headers["host"]).json
        case ("POST", "/api/share"):
            return ShareLink(trigger: trigger, host: request.headers["host"]).grant(request)
        case ("GET", _) where path.hasPrefix("/api/shares/") && path.hasSuffix(".svg"):
            return ShareLink(trigger: trigger, host: request.headers["host"]).svg(grant: String(path.dropFirst("/api/shares/".count).dropLast(".svg".count)))
        case ("POST", "/api/capture"), ("POST", "/api/enter"), ("POST", "/api/exit"):
            let event = ShutterEvent(rawValue: String(path.dropFirst("/api/".count)))!
            guard let (answer, photo) = trigger.fire(event, from: request.client) else {
                return .error(503, "no answer: the session is stopping or did not answer in time")
            }
            return .json(WebJSON.answer(answer, trigger: trigger.name, photo: photo))
        case ("POST", "/api/sequence"):
            // A sequence the config plans: accepted at once, answered as a `sequence` event.
            guard let body = try? JSONSerialization.jsonObject(with: request.body) as? [String: Any], let name = body["name"] as? String, !name.isEmpty else {
                return .error(400, "the body must be JSON: {\"name\": \"stack\"}, a sequence of the config's 'sequences:'")
            }
            let planned = trigger.sequences.withLock { $0 }
            guard planned.contains(name) else {
                return .error(404, "no sequence '\(LogText.escaped(name))' in the config", fix: planned.isEmpty ? "plan one under 'sequences:' (docs/config.md)" : "the sequences are: \(planned.joined(separator: ", "))")
            }
            guard trigger.startSequence(name, from: request.client) else { return .error(503, "the session is not running") }
            return .json(["sequence": name, "state": "queued"], status: 202)
        case ("GET", "/api/photos"):
            // The running session's recent shots: a viewer of another scope sees none.
            guard access.admitsLive(session: trigger.session) else { return .json(["photos": [Any]()]) }
            return .json(["photos": trigger.library.entries.map { WebJSON.photo($0, for: access) }])
        case ("GET", "/events"):
            let (log, client) = (trigger.log, request.client)
            let listener = trigger.hub.listen(access) { reason in
                log.warning("web: dropped the \(role.rawValue) at \(client) from /events, \(reason): it does not read (its page reconnects when it can)")
            }
            trigger.log.debug("web: the \(role.rawValue) at \(request.client) listens to /events (\(trigger.hub.count) listening)")
            return HTTPResponse(status: 200, contentType: "text/event-stream", headers: [("Cache-Control", "no-store")],
                                body: .stream(listener))
        case ("GET", _) where path.hasPrefix("/api/inflight/") && path.hasSuffix("/preview.jpg"):
            // A shot's early preview (the camera's thumbnail) while it is in flight: the
            // camera's bytes, served only when libjpeg-turbo reads them as a JPEG of sane size.
            guard access.admitsLive(session: trigger.session), let number = Int(path.dropFirst("/api/inflight/".count).dropLast("/preview.jpg".count)),
                  let preview = trigger.progress.preview(of: number), let size = JPEGDecoder.dimensions(preview.jpeg),
                  size.width <= 4096, size.height <= 4096 else {
                return .error(404, "no early preview at \(LogText.escaped(path)): the shot is stored (see /api/photos) or has none")
            }
            return HTTPResponse(status: 200, contentType: "image/jpeg", headers: [("Cache-Control", "no-store")], body: .bytes(preview.jpeg))
        case ("GET", _) where path.hasPrefix("/api/photos/") && path.hasSuffix("/preview.jpg"):
            guard access.admitsLive(session: trigger.session) else { return .error(404, "no photo \(path)") }
            return preview(String(path.dropFirst("/api/photos/".count).dropLast("/preview.jpg".count)), frame: request.query["frame"])
        case (_, "/"), (_, "/api/status"), (_, "/api/capture"), (_, "/api/enter"), (_, "/api/exit"), (_, "/api/photos"), (_, "/events"), (_, "/api/share.svg"), (_, "/api/share"), (_, "/api/session"), (_, "/api/sequence"):
            return .error(405, "\(request.method) is not allowed on \(path)")
        default:
            return .error(404, "no such route: \(path)", fix: "see GET /, /api/status, /api/photos, /api/shots, /api/share, /api/settings, /events, /live.mjpg, /live/{camera}.mjpg; POST /api/capture, /api/enter, /api/exit, /api/sequence, /api/marks, /api/settings, /api/lens")
        }
    }

    /// A POST from a page of another site (its Origin is not this server), or one that is
    /// not JSON: a form of another site can send `text/plain` or a form's types without
    /// any Origin in older browsers, and JSON it cannot send without asking first. A POST
    /// with no body needs no type (the page's shutter sends none).
    private func crossSite(_ request: HTTPRequest) -> HTTPResponse? {
        let type = request.headers["content-type"].map { $0.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? "" }
        if let type, type != "application/json" {
            return .error(403, "a POST must be JSON (Content-Type: application/json), not '\(LogText.escaped(type))'")
        }
        if type == nil && !request.body.isEmpty {
            return .error(403, "a POST with a body must say it is JSON (Content-Type: application/json)")
        }
        guard let origin = request.headers["origin"] else { return nil }  // not from a browser page
        guard let host = request.headers["host"], origin == "http://\(host)" || origin == "https://\(host)" else {
            return .error(403, "cross-site request refused (Origin \(origin))")
        }
        return nil
    }

    /// A viewer's status: whether photo mode is on, how many shots came; no camera, card,
    /// battery, disk or path.
    private func viewerStatus(_ access: WebAccess) -> [String: Any] {
        let summary = trigger.library.summary
        let live = access.admitsLive(session: trigger.session)
        return ["mode": summary.inPhotoMode ? "photo" : "idle", "stored": live ? summary.stored : 0, "failed": live ? summary.failed : 0,
                "latest": live ? summary.latest.map { WebJSON.photo($0, for: access) } ?? NSNull() : NSNull(), "listeners": 0,
                "liveView": false, "liveViewUnavailable": "live view is the operator's", "liveViewFrames": 0, "liveViewCameras": [Any](),
                "cameras": [Any](), "freeBytes": NSNull()]
    }

    private func status() -> [String: Any] {
        let summary = trigger.library.summary
        let views = trigger.liveViews
        var object: [String: Any] = ["mode": summary.inPhotoMode ? "photo" : "idle", "stored": summary.stored, "failed": summary.failed,
                                     "latest": summary.latest.map { WebJSON.photo($0, for: .operatorAccess) } ?? NSNull(), "listeners": trigger.hub.count,
                                     "liveView": views.hubs.contains { $0.unavailable == nil },
                                     "liveViewUnavailable": Self.liveViewUnavailable(views),
                                     "liveViewFrames": views.frames,
                                     "liveViewCameras": views.hubs.map { hub -> [String: Any] in
                                         ["name": hub.camera, "liveView": hub.unavailable == nil, "unavailable": hub.unavailable ?? NSNull(),
                                          "frames": hub.frames, "viewers": hub.viewerCount]
                                     },
                                     "sequences": trigger.sequences.withLock { $0 },
                                     "cameras": trigger.cameraStatus().map { camera -> [String: Any] in
                                         ["name": camera.name ?? NSNull(), "battery": camera.battery ?? NSNull(),
                                          "freeCardBytes": camera.freeCardBytes ?? NSNull(), "connected": camera.connected]
                                     }]
        if let folder = trigger.library.latestWithFile?.paths.first.map({ PathName.parent($0) }) {
            var stats = statvfs()
            if statvfs(folder, &stats) == 0 { object["freeBytes"] = Int64(stats.f_bavail) * Int64(stats.f_frsize) }
        }
        if object["freeBytes"] == nil { object["freeBytes"] = NSNull() }
        return object
    }

    /// Why no camera can give live view, or `NSNull` when one can.
    private static func liveViewUnavailable(_ views: LiveViews) -> Any {
        guard views.available else { return "this session's backend has none" }
        let reasons = views.hubs.compactMap(\.unavailable)
        return reasons.count == views.hubs.count ? reasons.joined(separator: "; ") : NSNull()
    }

    /// The preview of a recent photo, of `frame`'s camera (its first frame without one).
    private func preview(_ id: String, frame: String?) -> HTTPResponse {
        let entry = id == "latest" ? trigger.library.latestWithFile : Int(id).flatMap(trigger.library.entry)
        guard let entry else { return .error(404, "no photo \(id)") }
        let cameras = entry.frameCameras
        let camera: String?
        if let frame {
            guard let found = cameras.first(where: { ($0 ?? "") == frame }) else { return .error(404, "photo \(id) has no frame of camera '\(LogText.escaped(frame))'") }
            camera = found
        } else {
            camera = cameras.first ?? nil
        }
        guard let jpeg = PreviewMaker.previewSource(entry.paths(of: camera)) else { return .error(404, "photo \(id) has no JPEG, HEIF or RAW file to preview") }
        do {
            let data = try trigger.previews.preview(of: jpeg)
            return HTTPResponse(status: 200, contentType: "image/jpeg", headers: [("Cache-Control", id == "latest" ? "no-store" : "max-age=3600")],
                                body: .bytes(data))
        } catch {
            return .error(500, error.message, fix: error.fix)
        }
    }
}
