#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

/// A session with stdin and a web trigger on a free port; returns the process and the port.
func webSession(_ folder: TemporaryDirectory, web: String = "", width: Int = 3000, height: Int = 2000, card: String? = nil,
                verbose: Bool = false, yielding: Bool = false) async throws -> (RunningProcess, UInt16) {
    // The file-stub synthesises photos of that size, or replays the files of `card`.
    let backend = card.map { "{type: file-stub, directory: \($0)}" } ?? "{type: file-stub, width: \(width), height: \(height)}"
    let config = try writeConfig("""
    version: 1
    session: web
    backend: \(backend)
    triggers:
      - type: stdin
      - {type: web, listen: "127.0.0.1:0"\(web)}
    sinks: [{type: files, directory: \(folder.file("out"))}]
    """, in: folder)
    let arguments = ["run", "--config", config] + (verbose ? ["--verbose"] : [])
    // `yielding`: at nice 10, for a test of what a page shows (not how fast), so that the
    // in-process tests beside it keep the cores on a busy machine.
    let session = yielding ? try await RunningProcess.start(program: "nice", ["-n", "10", try shutterpipeBinary()] + arguments, in: folder.path)
        : try await RunningProcess.start(arguments, in: folder.path)
    guard let port = await webPort(session) else { throw TestSupportError("the web trigger did not start: \(session.stderrSoFar)") }
    return (session, port)
}

/// The port a session's web trigger listens on, from its log, once it does.
func webPort(_ session: RunningProcess) async -> UInt16? {
    let portOf: @Sendable () -> UInt16? = {
        let log = session.stderrSoFar
        guard let range = log.range(of: "web page at http://127.0.0.1:") else { return nil }
        return UInt16(log[range.upperBound...].prefix { $0.isNumber })
    }
    _ = await eventually { portOf() != nil }
    return portOf()
}

@Suite("web trigger", .timeLimit(.minutes(5)))
struct WebTriggerTests {
    @Test("shots from stdin and from POST /api/capture show in /api/status, /api/photos and /events; previews are scaled down by id")
    func routes() async throws {
        let folder = TemporaryDirectory("web-routes")
        let (session, port) = try await webSession(folder)
        for shot in 1...3 {
            session.send("capture\n")
            #expect(await eventually(timeout: .seconds(60)) { session.stdoutSoFar.split(separator: "\n").count >= shot })
        }
        #expect(await eventually { (try? await http("GET", "/api/status", port: port))?.json?["stored"] as? Int == 3 })
        let status = try #require(try await http("GET", "/api/status", port: port).json)
        #expect(status["mode"] as? String == "photo" && status["failed"] as? Int == 0 && (status["freeBytes"] as? Int ?? 0) > 0, "\(status)")
        let photos = try #require(try await http("GET", "/api/photos", port: port).json?["photos"] as? [[String: Any]])
        #expect(photos.map { $0["id"] as? Int } == [3, 2, 1] && photos.allSatisfy { $0["trigger"] as? String == "stdin" }, "\(photos)")

        // The next shot, fired over HTTP, reaches a listener of /events too.
        let events = Task { try await httpStream("/events", port: port, timeout: .seconds(60)) { String(decoding: $0, as: UTF8.self).contains("event: photo") } }
        #expect(await eventually { (try? await http("GET", "/api/status", port: port))?.json?["listeners"] as? Int == 1 })
        let fired = try await http("POST", "/api/capture", port: port)
        let answer = try #require(fired.json)
        #expect(fired.status == 200 && answer["state"] as? String == "photoSuccess" && answer["photo"] as? Int == 4, "\(answer)")
        #expect((answer["paths"] as? [String])?.first?.hasSuffix("web-0004.jpg") == true)
        let stream = String(decoding: try await events.value, as: UTF8.self)
        #expect(stream.contains("event: answer") && stream.contains("event: photo") && stream.contains("\"id\":4"), "\(stream.suffix(600))")

        // Previews: by id and latest, at most 1600 px on the long edge (3000 px photos: 4/8 = 1500 px).
        for route in ["/api/photos/2/preview.jpg", "/api/photos/latest/preview.jpg"] {
            let preview = try await http("GET", route, port: port)
            #expect(preview.status == 200 && preview.headers["content-type"] == "image/jpeg" && preview.body.prefix(2) == Data([0xFF, 0xD8]), "\(route)")
            let size = try #require(jpegSize(preview.body))
            #expect(size == (1500, 1000), "\(route): \(size)")
        }
        #expect(try await http("GET", "/api/photos/99/preview.jpg", port: port).status == 404)
        #expect(try await http("GET", "/api/photos/..%2F..%2Fetc%2Fpasswd/preview.jpg", port: port).status == 404)
        // file-stub has live view: two frames of the MJPEG stream, each a JPEG of its own.
        let live = String(decoding: try await httpStream("/live.mjpg", port: port, timeout: .seconds(60)) {
            String(decoding: $0, as: UTF8.self).components(separatedBy: "Content-Type: image/jpeg").count > 2
        }, as: UTF8.self)
        #expect(live.contains("multipart/x-mixed-replace; boundary=shutterpipe-frame") && live.contains("file-stub live view frame 2"), "\(live.prefix(300))")
        #expect(try await http("DELETE", "/api/photos", port: port).status == 405)
        // The web trigger serves until the session is stopped: end of stdin is not the end.
        session.signal(SIGTERM)
        #expect(await session.wait(timeout: .seconds(30)).status == 0)
    }

    @Test("token rules: off loopback a token is required by the config; with one, requests without it get 401, with it (Bearer or ?token=) 200; a cross-site POST gets 403")
    func tokens() async throws {
        let folder = TemporaryDirectory("web-token")
        let open = try writeConfig("""
        version: 1
        backend: {type: file-stub}
        triggers: [{type: web, listen: "0.0.0.0:8080"}]
        sinks: [{type: files, directory: out}]
        """, in: folder, name: "open.yaml")
        let refused = try await shutterpipe(["validate", open], in: folder.path)
        #expect(refused.status == 3 && refused.stderr.contains("open.yaml:3:") && refused.stderr.contains("a 'token' is required"), "\(refused.stderr)")

        let token = "0123456789abcdef0123"
        let (session, port) = try await webSession(folder, web: ", token: \(token)")
        #expect(try await http("GET", "/api/status", port: port).status == 401)
        #expect(try await http("GET", "/api/status", port: port, headers: ["Authorization": "Bearer wrong-token-wrong-token"]).status == 401)
        #expect(try await http("GET", "/api/status", port: port, headers: ["Authorization": "Bearer \(token)"]).status == 200)
        #expect(try await http("GET", "/api/status?token=\(token)", port: port).status == 200)
        #expect(try await http("GET", "/?token=\(token)", port: port).status == 200)
        let crossSite = try await http("POST", "/api/capture?token=\(token)", port: port, headers: ["Origin": "http://evil.example"])
        #expect(crossSite.status == 403, "\(crossSite.status)")
        let sameSite = try await http("POST", "/api/capture?token=\(token)", port: port, headers: ["Origin": "http://127.0.0.1"])
        #expect(sameSite.json?["state"] as? String == "photoSuccess", "\(String(decoding: sameSite.body, as: UTF8.self))")
        session.signal(SIGTERM)
        #expect(await session.wait(timeout: .seconds(30)).status == 0)
    }

    @Test("clients that open connections and never finish a request stall nobody: stdin is still answered, and a request after them works")
    func slowClients() async throws {
        let folder = TemporaryDirectory("web-slow")
        let (session, port) = try await webSession(folder, width: 64, height: 48)
        // Twenty clients that send half a request line and wait (the per-address limit is 16).
        var idle: [Int32] = []
        for _ in 0..<20 {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            _ = "GET /api/sta".withCString { write(descriptor, $0, 12) }
            idle.append(descriptor)
        }
        // The session goes on: a shot is answered while they hang (a frozen session never
        // answers, and the wait fails).
        session.send("capture\n")
        #expect(await eventually(timeout: .seconds(60)) { session.stdoutSoFar.contains("photoSuccess") }, "\(session.stderrSoFar.suffix(1000))")
        idle.forEach { close($0) }
        #expect(await eventually { (try? await http("GET", "/api/status", port: port))?.json?["stored"] as? Int == 1 })
        session.signal(SIGTERM)
        #expect(await session.wait(timeout: .seconds(30)).status == 0)
    }

    @Test("in a real browser: three shots fired from stdin appear on the page; a click on the shutter button takes a photo and the loupe shows it; a screenshot shows it")
    func browser() async throws {
        let folder = TemporaryDirectory("web-browser")
        // 2000×1500 photos (6/8 gives a 1500 px preview), small enough to shoot quickly on a
        // loaded machine.
        let (session, port) = try await webSession(folder, width: 2000, height: 1500)
        for shot in 1...3 {
            session.send("capture\n")
            #expect(await eventually(timeout: .seconds(60)) { session.stdoutSoFar.split(separator: "\n").count >= shot })
        }
        let screenshot = folder.file("page.png")
        // Chromium through the DevTools protocol (Tests/Browser/cdp.py): the page loads, the
        // browser decodes shot 3's preview (1500 px wide) in the loupe, then a real mouse click
        // on the shutter button takes shot 4, which the loupe shows at once, without a reload.
        let steps = [
            "wait:document.body.dataset.shownWidth == '1500' && app.total == 3",
            "eval:document.getElementById('stored').textContent",
            "click:shutter",
            "wait:app.total == 4 && /\\/api\\/(photos|shots)\\/4\\/preview.jpg/.test(document.body.dataset.shownSource)",
            "eval:document.getElementById('state').textContent",
            "screenshot:\(screenshot)",
        ]
        let run = try await browse(port, "/", steps, session: session)
        let output = run.output
        let values = run.steps
        #expect(values.contains { $0["value"] as? String == "3" }, "\(output)")
        #expect(values.contains { ($0["value"] as? String)?.hasPrefix("photoSuccess") == true && ($0["value"] as? String)?.contains("web-0004.jpg") == true }, "\(output)")
        #expect(session.stderrSoFar.contains("capture from web → photoSuccess"))
        let png = (try? Data(contentsOf: URL(fileURLWithPath: screenshot))) ?? Data()
        #expect(png.prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]) && png.count > 20_000, "screenshot of \(png.count) bytes")
        session.signal(SIGTERM)
        #expect(await session.wait(timeout: .seconds(30)).status == 0)
    }
}

/// A JPEG's width and height, from its first SOF segment.
func jpegSize(_ data: Data) -> (Int, Int)? {
    let bytes = [UInt8](data)
    var index = 2
    while index + 9 < bytes.count {
        guard bytes[index] == 0xFF else { return nil }
        let marker = bytes[index + 1]
        let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
        if (0xC0...0xCF).contains(marker) && ![0xC4, 0xC8, 0xCC].contains(marker) {
            return (Int(bytes[index + 7]) << 8 | Int(bytes[index + 8]), Int(bytes[index + 5]) << 8 | Int(bytes[index + 6]))
        }
        index += 2 + length
    }
    return nil
}
