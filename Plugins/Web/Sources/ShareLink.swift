#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit

/// The share panel's links: the page for a viewer (``WebAccess``), with its token after
/// `#`, which a browser never sends to a server, so it appears in no request line and no
/// log. `GET /api/share` gives the viewer token's link (the session that runs, by
/// default) as JSON, `GET /api/share.svg` as a QR code (``QRCode``) for the phones on the
/// set; `POST /api/share` makes a link of its own for chosen shots or a session label,
/// with or without the originals. All are the operator's.
///
/// A link phones can open: the web trigger's `publicURL`; else the address the operator's
/// browser used, unless that is loopback (`localhost`, 127.0.0.1), which a phone cannot
/// reach; else this machine's LAN address and the port. A page listening on loopback only
/// has no such link: the panel says why instead of showing one that cannot work.
struct ShareLink: Sendable {
    let trigger: WebTrigger
    /// The `Host` the operator's browser used.
    let host: String?

    private var options: WebOptions { trigger.options }

    /// Where phones open the page, or why there is no such address.
    var base: (url: String?, note: String?) {
        if let url = options.publicURL { return (url, nil) }
        if options.isLoopback {
            return (nil, "this page listens on loopback only: phones cannot reach it; listen on 0.0.0.0:PORT (with a token) for them, or set publicURL")
        }
        let port = trigger.port ?? options.port
        if let host, !host.isEmpty, !Self.isLoopback(host: host) { return ("http://\(host)", nil) }
        let address = options.host == "0.0.0.0" || options.host == "::" ? Self.lanAddress() : options.host
        guard let address else {
            return (nil, "this machine has no network address phones could reach; connect it to the studio's network, or set publicURL")
        }
        return ("http://\(address.contains(":") ? "[\(address)]" : address):\(port)", nil)
    }

    /// The viewer token's link.
    var link: String? {
        guard let viewer = options.viewerToken, let url = base.url else { return nil }
        return "\(url)/#token=\(viewer)"
    }

    /// What to tell the operator about the link, when phones could not open it.
    var note: String? {
        if options.viewerToken == nil { return "no viewer token: add 'viewerToken' to the web trigger to share the session with a client" }
        return base.note
    }

    var json: HTTPResponse {
        .json(["link": link.map { $0 as Any } ?? NSNull(), "note": note.map { $0 as Any } ?? NSNull(),
               "scope": options.viewerScope == "catalogue" ? "the whole catalogue" : "session \(trigger.session)",
               "originals": options.viewerOriginals])
    }

    func svg() -> HTTPResponse {
        guard let link else { return .error(404, "nothing to share", fix: note ?? "open the page through the address phones use") }
        return Self.qr(link)
    }

    /// `POST /api/share`: `{"shots": [12, 13]}` (chosen shots) or `{"sessionLabel":
    /// "ORDER-1234"}` or `{"session": "acme"}`, with `"originals": true` to let the viewer
    /// fetch full size, 100 % and RAW. Answers `{"link", "qr", "note"}`.
    func grant(_ request: HTTPRequest) -> HTTPResponse {
        guard options.token != nil else {
            return .error(409, "shares need tokens: this page has none", fix: "set 'token' (and listen off loopback) on the web trigger")
        }
        guard let body = try? JSONSerialization.jsonObject(with: request.body) as? [String: Any] else {
            return .error(400, "the body must be JSON: {\"shots\": [12, 13]}, {\"sessionLabel\": \"ORDER-1234\"} or {\"session\": \"acme\"}")
        }
        let scope: WebAccess.Scope
        if let ids = body["shots"] as? [Int], !ids.isEmpty, ids.count <= 10_000 {
            scope = .shots(Set(ids))
        } else if let label = body["sessionLabel"] as? String, !label.isEmpty {
            scope = .sessionLabel(label)
        } else if let session = body["session"] as? String, !session.isEmpty {
            scope = .session(session)
        } else {
            return .error(400, "a share names what it shows: \"shots\" (catalogue ids), \"sessionLabel\" or \"session\"")
        }
        let grant = trigger.shares.mint(WebAccess(role: .viewer, scope: scope, originals: body["originals"] as? Bool ?? false))
        let link = base.url.map { "\($0)/#token=\(grant.token)" }
        return .json(["link": link.map { $0 as Any } ?? NSNull(), "qr": "/api/shares/\(grant.id).svg",
                      "note": base.note.map { $0 as Any } ?? NSNull()])
    }

    /// The QR code of a share made with `POST /api/share`.
    func svg(grant id: String) -> HTTPResponse {
        guard let grant = trigger.shares.grant(id: id) else { return .error(404, "no share \(id)", fix: "make one with POST /api/share") }
        guard let url = base.url else { return .error(404, "nothing to share", fix: base.note ?? "set publicURL") }
        return Self.qr("\(url)/#token=\(grant.token)")
    }

    private static func qr(_ link: String) -> HTTPResponse {
        guard let code = QRCode(link) else { return .error(500, "the link is too long for a QR code", fix: "use a shorter viewerToken, or publicURL") }
        return HTTPResponse(status: 200, contentType: "image/svg+xml", headers: [("Cache-Control", "no-store")], body: .bytes(Data(code.svg.utf8)))
    }

    /// Whether a `Host` names this machine by loopback only.
    static func isLoopback(host header: String) -> Bool {
        var name = header.lowercased()
        if name.hasPrefix("[") { name = String(name.dropFirst().prefix { $0 != "]" }) } else if let colon = name.lastIndex(of: ":") { name = String(name[..<colon]) }
        return name == "localhost" || name.hasPrefix("127.") || name == "::1"
    }

    /// This machine's first IPv4 address on an interface that is up and not loopback.
    static func lanAddress() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var candidates: [String] = []
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            let flags = Int32(entry.pointee.ifa_flags)
            guard flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0,
                  let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            var ipv4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            if inet_ntop(AF_INET, &ipv4, &text, socklen_t(text.count)) != nil { candidates.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) }
        }
        return candidates.first
    }
}
