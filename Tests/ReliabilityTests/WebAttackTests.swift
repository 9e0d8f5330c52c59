#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

/// A session with stdin and a web trigger on a free port (verbose: its log lines are
/// gates), ready once the trigger logs its address.
struct WebSession {
    let process: RunningProcess
    let port: UInt16

    static func start(_ folder: TemporaryDirectory, web: String = "", backend: String = "{type: file-stub, width: 640, height: 480}",
                      filename: String = "{session}-{seq:04}.{ext}") async throws -> WebSession {
        let config = try writeConfig("""
        version: 1
        session: attack
        backend: \(backend)
        triggers:
          - type: stdin
          - {type: web, listen: "127.0.0.1:0"\(web)}
        sinks: [{type: files, directory: \(folder.file("out")), filename: "\(filename)"}]
        """, in: folder, name: "attack.yaml")
        let process = try await RunningProcess.start(["run", "--config", config, "--verbose", "--no-status"], in: folder.path)
        let portOf: @Sendable () -> UInt16? = {
            let log = process.stderrSoFar
            guard let range = log.range(of: "web page at http://127.0.0.1:") else { return nil }
            return UInt16(log[range.upperBound...].prefix { $0.isNumber })
        }
        guard await eventually({ portOf() != nil || !process.isRunning }), let port = portOf() else {
            throw TestSupportError("the web trigger did not start: \(process.stderrSoFar)")
        }
        return WebSession(process: process, port: port)
    }

    /// One shot from stdin, waited for until the session has answered it and its
    /// catalogue has recorded it.
    func shoot(_ number: Int) async {
        process.send("capture\n")
        await process.waitForOutput(on: .stdout, "answer \(number)") { $0.split(separator: "\n").count >= number }
        await process.waitForOutput("\(number) shots recorded") { shotsRecorded(in: $0) >= number }
    }

    func stop() async -> Outcome {
        process.signal(SIGTERM)
        return await process.wait(timeout: .seconds(30))
    }
}

/// Case 9: the adversarial pass of issue 28 against the web page, one test per attack;
/// each fails on the code before its fix.
@Suite("fault: attacks on the web page")
struct WebAttackTests {
    @Test("DNS rebinding: a request under another site's name gets 403 before any route, GETs and streams included; no photo is taken; the server's own names and the listed ones still work")
    func rebinding() async throws {
        let folder = TemporaryDirectory("chaos-rebind")
        let web = try await WebSession.start(folder, web: ", hosts: [studio.lan]")
        let evil = ["Host": "attacker.example:\(web.port)", "Origin": "http://attacker.example:\(web.port)"]
        var refused = 0
        for (method, path) in [("POST", "/api/capture"), ("POST", "/api/exit"), ("POST", "/api/enter"), ("GET", "/api/status"), ("GET", "/api/photos"),
                               ("GET", "/api/shots"), ("GET", "/api/photos/latest/preview.jpg"), ("GET", "/live.mjpg"), ("GET", "/"), ("GET", "/events")] {
            let reply = try await http(method, path, port: web.port, headers: evil, timeout: .seconds(30))
            #expect(reply.status == 403 && (reply.json?["error"] as? String)?.contains("attacker.example") == true, "\(method) \(path): \(reply.status)")
            if reply.status == 403 { refused += 1 }
        }
        // A page of the attacker's name, text/plain, no Origin (what an <img> or a form sends).
        let form = try await http("POST", "/api/capture", port: web.port, headers: ["Host": "attacker.example", "Content-Type": "text/plain"])
        #expect(form.status == 403)
        for host in ["127.0.0.1:\(web.port)", "localhost:\(web.port)", "studio.lan:\(web.port)", "STUDIO.LAN."] {
            #expect(try await http("GET", "/api/status", port: web.port, headers: ["Host": host]).status == 200, "Host \(host)")
        }
        let outcome = await web.stop()
        #expect(outcome.status == 0)
        #expect(!outcome.stdout.contains("answer"), "a refused request shot or answered: \(outcome.stdout)")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.file("out")).filter { $0.hasSuffix(".jpg") }.count) ?? 0 == 0)
        #expect(outcome.stderr.contains("refused a request from 127.0.0.1 for Host 'attacker.example"))
        Chaos.record("web DNS rebinding", ["refused": refused + 1, "requests": 11])
    }

    @Test("a stored photo swapped for a symbolic link (to a secret outside the capture folder): its preview, 100 % view and tiles are refused, the secret never served")
    func symlinkedPhoto() async throws {
        let folder = TemporaryDirectory("chaos-symlink")
        let secret = folder.file("secret.jpg")
        // The secret is a JPEG of its own (not the stored photo's size), which a preview
        // would happily show.
        let web = try await WebSession.start(folder, backend: "{type: file-stub, width: 320, height: 200}")
        await web.shoot(1)
        let stored = try #require(try FileManager.default.subpathsOfDirectory(atPath: folder.file("out")).first { $0.hasSuffix(".jpg") })
        let photo = folder.file("out/\(stored)")
        let routes = ["/api/photos/1/preview.jpg", "/api/photos/latest/preview.jpg", "/api/shots/1/full.jpg", "/api/shots/1/thumbnail.jpg"]
        for path in routes { #expect(try await http("GET", path, port: web.port).status == 200, "\(path) before the swap") }
        let secretBytes = try Data(contentsOf: URL(fileURLWithPath: photo)) + Data(repeating: 0, count: 4096)
        try secretBytes.writeTestFile(secret)
        try FileManager.default.removeItem(atPath: photo)
        try FileManager.default.createSymbolicLink(atPath: photo, withDestinationPath: secret)
        for path in routes {
            let reply = try await http("GET", path, port: web.port)
            #expect(reply.status != 200 && reply.headers["content-type"] != "image/jpeg", "\(path): \(reply.status) \(reply.body.count) bytes")
        }
        let outcome = await web.stop()
        #expect(outcome.status == 0)
        Chaos.record("web symlinked photo", ["served": 0])
    }

    @Test("a folder of the capture folder swapped for a symbolic link to another folder holding a file of the photo's name: that file is never served")
    func symlinkedFolder() async throws {
        let folder = TemporaryDirectory("chaos-symlink-folder")
        let web = try await WebSession.start(folder, backend: "{type: file-stub, width: 320, height: 200}", filename: "{camera}/{seq:04}.{ext}")
        await web.shoot(1)
        let camera = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.file("out")).first { !$0.hasPrefix(".") })
        #expect(try await http("GET", "/api/shots/1/full.jpg", port: web.port).status == 200, "before the swap")
        // The same name, other bytes, in a folder outside the capture folder.
        try FileManager.default.moveItem(atPath: folder.file("out/\(camera)"), toPath: folder.file("elsewhere"))
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.file("elsewhere")).first { $0.hasSuffix(".jpg") })
        let secret = try Data(contentsOf: URL(fileURLWithPath: folder.file("elsewhere/\(name)"))) + Data(repeating: 1, count: 2048)
        try secret.writeTestFile(folder.file("elsewhere/\(name)"))
        try FileManager.default.createSymbolicLink(atPath: folder.file("out/\(camera)"), withDestinationPath: folder.file("elsewhere"))
        for path in ["/api/photos/1/preview.jpg", "/api/shots/1/full.jpg", "/api/shots/1/thumbnail.jpg"] {
            let reply = try await http("GET", path, port: web.port)
            #expect(reply.status != 200 && (reply.json?["error"] as? String)?.contains("symbolic link") == true, "\(path): \(reply.status)")
        }
        #expect(await web.stop().status == 0)
    }

    @Test("forged log lines: a newline, ESC sequences and C1 controls in a socket event name or a web Host stay on one escaped line")
    func forgedLogLines() async throws {
        let folder = TemporaryDirectory("chaos-logline")
        let socket = folder.file("s.sock")
        let config = try writeConfig("""
        version: 1
        session: forge
        backend: {type: file-stub, width: 64, height: 48}
        triggers: [{type: socket, path: \(socket)}, {type: web, listen: "127.0.0.1:0"}]
        sinks: [{type: files, directory: \(folder.file("out"))}]
        """, in: folder, name: "forge.yaml")
        let process = try await RunningProcess.start(["run", "--config", config, "--no-status"], in: folder.path)
        #expect(await eventually { let probe = connectUnixSocket(socket); if probe >= 0 { close(probe) }; return probe >= 0 || !process.isRunning })
        let forged = "09:00:00.000 [coordinator] ok"
        let client = try await SocketLines(path: socket)
        await client.send("{\"event\":\"x\\n\(forged)\\u001b[2J\\u009b31m\",\"id\":1}\n")
        _ = await client.replies(1)
        // The web trigger starts beside the socket one: its port is read once it says it
        // (under load its line comes after the socket's first reply).
        let portOf: @Sendable () -> UInt16? = {
            let log = process.stderrSoFar
            return log.range(of: "web page at http://127.0.0.1:").flatMap { UInt16(log[$0.upperBound...].prefix { $0.isNumber }) }
        }
        guard await eventually({ portOf() != nil || !process.isRunning }), let port = portOf() else {
            throw TestSupportError("the web trigger did not start: \(process.stderrSoFar)")
        }
        _ = try await http("GET", "/api/status", port: port, headers: ["Host": "evil\u{1b}[31m.example"])
        process.signal(SIGTERM)
        let outcome = await process.wait(timeout: .seconds(30))
        let lines = outcome.stderr.split(separator: "\n")
        #expect(!lines.contains { $0.hasPrefix(forged) }, "a forged line: \(outcome.stderr)")
        #expect(!outcome.stderr.contains("\u{1b}") && !outcome.stderr.contains("\u{9b}"), "a raw control character in the log")
        #expect(outcome.stderr.contains("\\n\(forged)"), "the event name shows escaped: \(outcome.stderr)")
        #expect(outcome.stderr.contains("evil\\x1b[31m.example"), "the Host shows escaped: \(outcome.stderr)")
    }
}
