import Foundation
import ShutterPipeImaging
import ShutterPipeKit

/// The options of the `web` trigger.
public struct WebOptions: Sendable, Equatable {
    /// The address to listen on.
    public var host = "127.0.0.1"
    /// The port (0: any free one, for tests).
    public var port: UInt16 = 8080
    /// The operator's token: every request must carry it or the viewer's, if set
    /// (required off loopback).
    public var token: String?
    /// The viewer's token, for a client's phone or laptop: sees the session live, never
    /// shoots or changes settings (``WebRole``). Needs `token`.
    public var viewerToken: String?
    /// Whether the viewer's token may rate, label and pick.
    public var viewersMayMark = false
    /// What the viewer's token shows: `session`, the shots of the session that runs (a
    /// client sees their shoot, not another's in the same catalogue), or `catalogue`, all.
    public var viewerScope = "session"
    /// Whether viewers may fetch the originals: full size, 100 % tiles, the RAW.
    public var viewerOriginals = false
    /// The address phones reach the page at (`http://studio.local:8080`), for the share
    /// link; `nil`: this machine's LAN address and the port.
    public var publicURL: String?
    /// The most the full-size images decoded for the 100 % view may take in memory, in
    /// MiB, together with the whole-image decode under way (``DecodeBudget``): a 100 MP
    /// JPEG needs about 600 MiB to decode.
    public var fullImageCacheMB = 1024
    /// The largest picture decoded, in millions of pixels, for a preview or at 100 %: a
    /// photo's header declaring more is refused before any decode (200: above every camera
    /// sensor sold).
    public var maxMegapixels = 200
    /// The long edge of previews, at most, in pixels.
    public var previewSize = 1600
    /// How many recent photos the page and `/api/photos` keep.
    public var recent = 200
    /// The most the previews kept on disk beside the catalogue may take, in MiB; 0 keeps
    /// none there.
    public var previewCacheMB = 1024
    /// Names of this machine that requests may carry in `Host` (`studio.local`), besides
    /// the listening address and `localhost`. Anything else is refused: a page of another
    /// site whose name resolves to this machine (DNS rebinding) gets nothing.
    public var hosts: [String] = []

    /// Whether `host` is a loopback address: only this machine can connect.
    public var isLoopback: Bool {
        host == "::1" || host.hasPrefix("127.")
    }

    public init() {}

    /// Reads the options of a `web` trigger.
    public init(_ options: PluginOptions) throws {
        let listen = try options.string("listen", default: "127.0.0.1:8080")
        guard let (host, port) = Self.parse(listen) else {
            throw options.error("'listen': '\(listen)' is not HOST:PORT (e.g. 127.0.0.1:8080, 0.0.0.0:8080, [::1]:8080)", key: "listen")
        }
        self.host = host
        self.port = port
        token = try options.string("token")
        if let token, token.count < 16 {
            throw options.error("'token' is \(token.count) characters: use at least 16 (openssl rand -hex 16)", key: "token")
        }
        viewerToken = try options.string("viewerToken")
        if let viewerToken {
            guard viewerToken.count >= 16 else {
                throw options.error("'viewerToken' is \(viewerToken.count) characters: use at least 16 (openssl rand -hex 16)", key: "viewerToken")
            }
            guard token != nil else {
                throw options.error("'viewerToken' needs a 'token' for the operator: without one, anybody who can reach the page may shoot", key: "viewerToken")
            }
            guard viewerToken != token else {
                throw options.error("'viewerToken' is the same as 'token': give the viewers a token of their own", key: "viewerToken")
            }
        }
        viewersMayMark = try options.bool("viewersMayMark", default: viewersMayMark)
        viewerScope = try options.choice("viewerScope", from: ["session", "catalogue"], default: viewerScope)
        viewerOriginals = try options.bool("viewerOriginals", default: viewerOriginals)
        if let url = try options.string("publicURL") {
            guard let parts = URLComponents(string: url), ["http", "https"].contains(parts.scheme ?? ""), parts.host?.isEmpty == false else {
                throw options.error("'publicURL' must be an address phones can open, such as http://studio.local:8080; got '\(url)'", key: "publicURL")
            }
            publicURL = url.hasSuffix("/") ? String(url.dropLast()) : url
        }
        fullImageCacheMB = try options.int("fullImageCacheMB", default: fullImageCacheMB, in: 64...65_536)
        maxMegapixels = try options.int("maxMegapixels", default: maxMegapixels, in: 1...2_000)
        previewSize = try options.int("previewSize", default: previewSize, in: 64...8192)
        recent = try options.int("recent", default: recent, in: 1...10_000)
        previewCacheMB = try options.int("previewCacheMB", default: previewCacheMB, in: 0...1_048_576)
        hosts = try options.stringList("hosts")
        if let bad = hosts.first(where: { $0.isEmpty || $0.contains(where: { $0 == "/" || $0 == ":" || $0.isWhitespace }) }) {
            throw options.error("'hosts': '\(bad)' is not a host name (give names such as studio.local, without port or scheme)", key: "hosts")
        }
        if !isLoopback && token == nil {
            throw options.error("'listen: \(listen)' lets other machines in, so a 'token' is required",
                                key: "listen")
        }
    }

    /// Whether a request's `Host` header names this server: the listening address (any
    /// address literal when listening on all of them: a literal cannot be rebound),
    /// `localhost`, or one of ``hosts``. The port is not compared.
    public func accepts(host header: String?) -> Bool {
        guard var name = header?.lowercased(), !name.isEmpty else { return false }
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return false }
            name = String(name[name.index(after: name.startIndex)..<close])
        } else if let colon = name.lastIndex(of: ":") {
            name = String(name[..<colon])
        }
        if name.hasSuffix(".") { name.removeLast() }
        if name == "localhost" || name == host.lowercased() || hosts.contains(where: { $0.lowercased() == name }) { return true }
        let literal = Self.isAddressLiteral(name)
        if literal && (host == "0.0.0.0" || host == "::") { return true }
        return literal && isLoopback && (name == "::1" || name.hasPrefix("127."))
    }

    static func isAddressLiteral(_ name: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, name, &v4) == 1 || inet_pton(AF_INET6, name, &v6) == 1
    }

    /// `HOST:PORT`, `[V6]:PORT` or `localhost:PORT`.
    static func parse(_ text: String) -> (String, UInt16)? {
        var host: Substring, port: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            port = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        }
        guard let number = UInt16(port), !host.isEmpty else { return nil }
        return (host == "localhost" ? "127.0.0.1" : String(host), number)
    }
}

extension DecodeBudget.Settings {
    /// The web trigger's options that raise a decode budget's limits.
    static let webTrigger = DecodeBudget.Settings(pixels: "the web trigger's maxMegapixels", memory: "the web trigger's fullImageCacheMB")
}
