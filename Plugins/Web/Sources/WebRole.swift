import Foundation

/// Who a request comes from, by the token it carries, and what that one may do.
///
/// - The **operator** (the `token`, or anybody on loopback when no token is set) may do
///   everything: shoot, enter, exit, live view, camera settings and the lens, marks, the share panel.
/// - The **viewer** (the `viewerToken`: the client's phone or laptop) sees the session
///   live: the shots, their previews, 100 % tiles, histograms. It rates, labels and picks
///   only when `viewersMayMark` is set; it never shoots, starts live view or changes settings.
///
/// A token is read from `Authorization: Bearer`, else from the cookie the page gets from
/// `POST /api/session` (``cookieName``: images, tiles and the event stream carry it, no
/// URL does), else from `?token=` (scripts, a first link). It is compared in constant
/// time and never logged.
enum WebRole: String, Sendable {
    case `operator`, viewer

    /// The token `request` carries: `Authorization: Bearer`, else the cookie of its tab's
    /// role (a tab that is a viewer says so, `?as=viewer` or `X-Shutterpipe-As: viewer`, so
    /// that the operator's cookie in the same browser never makes it the operator, nor the
    /// reverse), else `?token=`.
    static func token(of request: HTTPRequest) -> String? {
        if let bearer = bearer(request) { return bearer }
        let asViewer = request.query["as"] == "viewer" || request.headers["x-shutterpipe-as"] == "viewer"
        let cookies = asViewer ? [viewerCookieName, cookieName] : [cookieName, viewerCookieName]
        return cookies.lazy.compactMap { cookie(request, named: $0) }.first ?? request.query["token"]
    }

    /// The role `given` is the token of, if any.
    static func of(token given: String, _ options: WebOptions) -> WebRole? {
        guard let token = options.token else { return .operator }
        if same(given, token) { return .operator }
        if let viewer = options.viewerToken, same(given, viewer) { return .viewer }
        return nil
    }

    /// The cookies that carry the token for the page, one per role, so that a viewer link
    /// opened in the operator's browser takes nothing from the operator's tabs: `HttpOnly`
    /// (no script reads them), `SameSite=Strict` (no other site's page sends them).
    static let cookieName = "shutterpipe-token"
    static let viewerCookieName = "shutterpipe-viewer"

    /// The token of `Authorization: Bearer TOKEN`.
    static func bearer(_ request: HTTPRequest) -> String? {
        request.headers["authorization"].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
    }

    static func cookie(_ request: HTTPRequest, named name: String = cookieName) -> String? {
        guard let header = request.headers["cookie"] else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.trimmingCharacters(in: .whitespaces)
            if pair.hasPrefix(name + "=") { return String(pair.dropFirst(name.count + 1)).removingPercentEncoding }
        }
        return nil
    }

    /// `Set-Cookie` for a token, percent-encoded: a token may hold what a cookie cannot
    /// (`;`, `,`, spaces).
    static func setCookie(_ token: String, for role: WebRole = .operator) -> (String, String) {
        var plain = CharacterSet.alphanumerics
        plain.insert(charactersIn: "-._~")
        let value = token.addingPercentEncoding(withAllowedCharacters: plain) ?? ""
        return ("Set-Cookie", "\(role == .viewer ? viewerCookieName : cookieName)=\(value); Path=/; HttpOnly; SameSite=Strict")
    }

    /// The 401 of a request without a token.
    static var unauthorized: HTTPResponse {
        var response = HTTPResponse.error(401, "a token is required", fix: "send 'Authorization: Bearer TOKEN', or open the page as /#token=TOKEN")
        response.headers.append(("WWW-Authenticate", "Bearer"))
        return response
    }

    /// The 403 a viewer gets for what only the operator may do; `nil` when allowed.
    func refusal(_ request: HTTPRequest, _ options: WebOptions) -> HTTPResponse? {
        guard self == .viewer else { return nil }
        let path = request.path
        switch (request.method, path) {
        case ("POST", "/api/capture"), ("POST", "/api/enter"), ("POST", "/api/exit"), ("POST", "/api/sequence"):
            return .error(403, "the viewer's token cannot shoot, enter, exit or run a sequence", fix: "the operator's token (the 'token' option) can")
        case ("POST", "/api/marks") where !options.viewersMayMark:
            return .error(403, "the viewer's token may not rate, label or pick in this session", fix: "set 'viewersMayMark: true' on the web trigger to let viewers mark shots")
        case ("GET", _) where path == "/live.mjpg" || path.hasPrefix("/live/"):
            return .error(403, "live view is the operator's: it drives the camera", fix: "the operator's token (the 'token' option) can start it")
        case ("GET", "/api/settings"):
            return .error(403, "the camera's settings are the operator's", fix: "the operator's token (the 'token' option) can read and change them")
        case ("GET", "/api/share.svg"), ("GET", "/api/share"):
            return .error(403, "the share panel is the operator's", fix: "ask the operator for the viewer link")
        default:
            return request.method == "GET" || (request.method == "POST" && (path == "/api/marks" || path == "/api/session")) ? nil
                : .error(403, "the viewer's token cannot \(request.method) \(path)", fix: "the operator's token (the 'token' option) can")
        }
    }

    /// Compares in constant time.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
