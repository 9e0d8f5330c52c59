import Foundation

/// The share panel's link: the page for a viewer (``WebRole/viewer``), with the viewer's
/// token after `#`, which a browser never sends to a server, so it appears in no request
/// line and no log. `GET /api/share` gives it as JSON, `GET /api/share.svg` as a QR code
/// (``QRCode``) for the phones on the set; both are the operator's.
struct ShareLink: Sendable {
    let options: WebOptions
    /// The `Host` the operator's browser used: the address that reached this machine.
    let host: String?

    var link: String? {
        guard let viewer = options.viewerToken, let host, !host.isEmpty else { return nil }
        return "http://\(host)/#token=\(viewer)"
    }

    /// What to tell the operator about the link, when phones could not open it.
    var note: String? {
        if options.viewerToken == nil { return "no viewer token: add 'viewerToken' to the web trigger to share the session with a client" }
        if options.isLoopback { return "this page listens on loopback only: phones cannot reach it; listen on 0.0.0.0:PORT (with a token) for them" }
        return nil
    }

    var json: HTTPResponse {
        .json(["link": link.map { $0 as Any } ?? NSNull(), "note": note.map { $0 as Any } ?? NSNull()])
    }

    func svg() -> HTTPResponse {
        guard let link else { return .error(404, "nothing to share", fix: note ?? "open the page through the address phones use") }
        guard let code = QRCode(link) else { return .error(500, "the viewer link is too long for a QR code", fix: "use a shorter viewerToken") }
        return HTTPResponse(status: 200, contentType: "image/svg+xml", headers: [("Cache-Control", "no-store")], body: .bytes(Data(code.svg.utf8)))
    }
}
