#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit

/// The routes of the `web` trigger. The page uses the same ones as scripts.
struct WebRoutes: Sendable {
    let trigger: WebTrigger

    func answer(_ request: HTTPRequest) -> HTTPResponse {
        if let refusal = refused(request) { return refusal }
        if let shots = CatalogueRoutes(trigger: trigger).answer(request) { return shots }
        let path = request.path
        switch (request.method, path) {
        case ("GET", "/"), ("GET", "/index.html"):
            return HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", headers: [("Cache-Control", "no-store")], body: .bytes(Data(WebPage.html.utf8)))
        case ("GET", "/api/status"):
            return .json(status())
        case ("POST", "/api/capture"), ("POST", "/api/enter"), ("POST", "/api/exit"):
            if let crossSite = crossSite(request) { return crossSite }
            let event = ShutterEvent(rawValue: String(path.dropFirst("/api/".count)))!
            guard let (answer, photo) = trigger.fire(event, from: request.client) else {
                return .error(503, "no answer: the session is stopping or did not answer in time")
            }
            return .json(WebJSON.answer(answer, trigger: "web", photo: photo))
        case ("GET", "/api/photos"):
            return .json(["photos": trigger.library.entries.map(WebJSON.photo)])
        case ("GET", "/events"):
            return HTTPResponse(status: 200, contentType: "text/event-stream", headers: [("Cache-Control", "no-store")],
                                body: .stream(trigger.hub.listen()))
        case ("GET", "/live.mjpg"):
            guard trigger.liveView.source != nil else {
                return .error(404, "live view: this session's backend has none", fix: "the last shot is at /api/photos/latest/preview.jpg")
            }
            return HTTPResponse(status: 200, contentType: "multipart/x-mixed-replace; boundary=\(LiveViewHub.boundary)",
                                headers: [("Cache-Control", "no-store")], body: .stream(trigger.liveView.watch()))
        case ("GET", _) where path.hasPrefix("/api/photos/") && path.hasSuffix("/preview.jpg"):
            return preview(String(path.dropFirst("/api/photos/".count).dropLast("/preview.jpg".count)))
        case (_, "/"), (_, "/api/status"), (_, "/api/capture"), (_, "/api/enter"), (_, "/api/exit"), (_, "/api/photos"), (_, "/events"):
            return .error(405, "\(request.method) is not allowed on \(path)")
        default:
            return .error(404, "no such route: \(path)", fix: "see GET /, /api/status, /api/photos, /api/shots, /events; POST /api/capture, /api/enter, /api/exit")
        }
    }

    /// A request without the token, where one is set; a body over the limit.
    private func refused(_ request: HTTPRequest) -> HTTPResponse? {
        if request.bodyTooLarge { return .error(413, "the request body is too large") }
        guard let token = trigger.options.token else { return nil }
        let bearer = request.headers["authorization"].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        guard let given = bearer ?? request.query["token"], Self.same(given, token) else {
            var response = HTTPResponse.error(401, "a token is required", fix: "send 'Authorization: Bearer TOKEN', or open the page as /?token=TOKEN")
            response.headers.append(("WWW-Authenticate", "Bearer"))
            return response
        }
        return nil
    }

    /// A POST from a page of another site (its Origin is not this server).
    private func crossSite(_ request: HTTPRequest) -> HTTPResponse? {
        guard let origin = request.headers["origin"] else { return nil }  // not from a browser page
        guard let host = request.headers["host"], origin == "http://\(host)" || origin == "https://\(host)" else {
            return .error(403, "cross-site request refused (Origin \(origin))")
        }
        return nil
    }

    private func status() -> [String: Any] {
        let summary = trigger.library.summary
        var object: [String: Any] = ["mode": summary.inPhotoMode ? "photo" : "idle", "stored": summary.stored, "failed": summary.failed,
                                     "latest": summary.latest.map(WebJSON.photo) ?? NSNull(), "listeners": trigger.hub.count,
                                     "liveView": trigger.liveView.source != nil, "liveViewFrames": trigger.liveView.frames,
                                     "cameras": trigger.cameraStatus().map { camera -> [String: Any] in
                                         ["name": camera.name ?? NSNull(), "battery": camera.battery ?? NSNull(),
                                          "freeCardBytes": camera.freeCardBytes ?? NSNull(), "connected": camera.connected]
                                     }]
        if let folder = trigger.library.latestWithFile?.paths.first.map({ ($0 as NSString).deletingLastPathComponent }) {
            var stats = statvfs()
            if statvfs(folder, &stats) == 0 { object["freeBytes"] = Int64(stats.f_bavail) * Int64(stats.f_frsize) }
        }
        if object["freeBytes"] == nil { object["freeBytes"] = NSNull() }
        return object
    }

    private func preview(_ id: String) -> HTTPResponse {
        let entry = id == "latest" ? trigger.library.latestWithFile : Int(id).flatMap(trigger.library.entry)
        guard let entry else { return .error(404, "no photo \(id)") }
        guard let jpeg = PreviewMaker.previewSource(entry.paths) else { return .error(404, "photo \(id) has no JPEG, HEIF or RAW file to preview") }
        do {
            let data = try trigger.previews.preview(of: jpeg)
            return HTTPResponse(status: 200, contentType: "image/jpeg", headers: [("Cache-Control", id == "latest" ? "no-store" : "max-age=3600")],
                                body: .bytes(data))
        } catch {
            return .error(500, error.message, fix: error.fix)
        }
    }

    /// Compares in constant time.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
