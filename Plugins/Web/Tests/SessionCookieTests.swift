import Foundation
import TestSupport
import Testing

@Suite("web: the page's cookie")
struct SessionCookieTests {
    @Test("POST /api/session trades a token (one holding ';', ',' and spaces) for an HttpOnly, SameSite=Strict cookie that then opens every route; a wrong cookie is 401; the viewer gets the viewer's role; a /?token= link sets it, a wrong one never replaces it")
    func cookie() async throws {
        let folder = TemporaryDirectory("web-cookie")
        let token = "studio; token, with spaces 42", viewer = "viewer-token-0123456789"
        let (session, port) = try await webSession(folder, web: ", token: \"\(token)\", viewerToken: \(viewer)", width: 64, height: 48)
        let traded = try await http("POST", "/api/session", port: port, headers: ["Authorization": "Bearer \(token)"])
        let setCookie = try #require(traded.headers["set-cookie"], "\(traded.headers)")
        #expect(traded.status == 200 && traded.json?["role"] as? String == "operator")
        #expect(setCookie.hasSuffix("; Path=/; HttpOnly; SameSite=Strict") && !setCookie.contains(" token") && !setCookie.contains(","), "\(setCookie)")
        let cookie = String(setCookie.prefix { $0 != ";" })
        let status = try await http("GET", "/api/status", port: port, headers: ["Cookie": "other=1; \(cookie)"])
        #expect(status.status == 200 && status.json?["role"] as? String == "operator")
        #expect(try await http("GET", "/api/status", port: port, headers: ["Cookie": "shutterpipe-token=guess"]).status == 401)
        let asViewer = try await http("POST", "/api/session", port: port, headers: ["Authorization": "Bearer \(viewer)"])
        #expect(asViewer.status == 200 && asViewer.json?["role"] as? String == "viewer")
        // The viewer's cookie has a name of its own: it never replaces the operator's.
        #expect(asViewer.headers["set-cookie"]?.hasPrefix("shutterpipe-viewer=\(viewer);") == true, "\(asViewer.headers)")
        let both = "\(cookie); shutterpipe-viewer=\(viewer)"
        #expect(try await http("GET", "/api/status", port: port, headers: ["Cookie": both]).json?["role"] as? String == "operator")
        #expect(try await http("GET", "/api/status?as=viewer", port: port, headers: ["Cookie": both]).json?["role"] as? String == "viewer")
        #expect(try await http("GET", "/api/status", port: port, headers: ["Cookie": both, "X-Shutterpipe-As": "viewer"]).json?["role"] as? String == "viewer")
        #expect(try await http("POST", "/api/session", port: port).status == 401)
        // A link /?token=… sets the cookie; a wrong one never replaces a good cookie.
        let viewerLink = try await http("GET", "/?token=\(viewer)", port: port)
        #expect(viewerLink.status == 200 && viewerLink.headers["set-cookie"]?.hasPrefix("shutterpipe-viewer=\(viewer);") == true)
        let wrongLink = try await http("GET", "/?token=wrong-token-0123456789", port: port, headers: ["Cookie": cookie])
        #expect(wrongLink.status == 200 && wrongLink.headers["set-cookie"] == nil, "\(wrongLink.headers)")
        session.signal(SIGTERM)
        #expect(await session.wait(timeout: .seconds(30)).status == 0)
    }
}
