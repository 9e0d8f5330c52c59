#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeFixtures
import TestSupport
import Testing
@testable import WebTrigger

/// The dark modules of a QR code's SVG (``QRCode/svg``), drawn 4 pixels each with its
/// quiet zone into a PGM that zbarimg reads. Off the cooperative pool (it is a loop over
/// every module).
func rasterise(_ svg: String, to path: String) async throws {
    try await offThePool {
        guard let view = svg.range(of: "viewBox=\"0 0 "), let side = Int(svg[view.upperBound...].prefix { $0.isNumber }),
              let data = svg.range(of: " d=\"") else { throw TestSupportError("not a QR code's SVG: \(svg.prefix(200))") }
        let scale = 4
        var pixels = [UInt8](repeating: 255, count: side * side * scale * scale)
        // "M12 4h1v1h-1z" per dark module.
        for move in svg[data.upperBound...].prefix(while: { $0 != "\"" }).split(separator: "M") {
            let numbers = move.prefix { $0 != "h" }.split(separator: " ").compactMap { Int($0) }
            guard numbers.count == 2 else { continue }
            for dy in 0..<scale { for dx in 0..<scale { pixels[(numbers[1] * scale + dy) * side * scale + numbers[0] * scale + dx] = 0 } }
        }
        try (Data("P5\n\(side * scale) \(side * scale)\n255\n".utf8) + Data(pixels)).writeTestFile(path)
    }
}

extension ReviewSuites {
    @Suite("web: who sees and marks what on the review screen, and how much it loads", .serialized, .timeLimit(.minutes(6)))
    struct ReviewAccessTests {
        @Test("the share panel's QR code: every length up to version 10 (213 bytes) reads back through zbarimg; longer is refused")
        func qrCodes() async throws {
            let folder = TemporaryDirectory("qr")
            let texts = [1, 17, 40, 70, 100, 134, 180, 213].map { length in
                String("http://192.168.1.20:8080/#token=0123456789abcdefghijklmnopqrstuvwxyz".cycled(to: length))
            }
            var files: [String] = []
            for (index, text) in texts.enumerated() {
                let code = try #require(try await offThePool { QRCode(text) }, "\(text.count) bytes")
                files.append(folder.file("code\(index).pgm"))
                try await rasterise(code.svg, to: files.last!)
            }
            #expect(QRCode(String(repeating: "x", count: 214)) == nil)
            for (file, text) in zip(files, texts) {
                let read = try await runProgram(["zbarimg", "--raw", "-q", "--nodbus", file])
                #expect(read.status == 0 && read.text.trimmingCharacters(in: .newlines) == text, "\(text.count) bytes: '\(read.text)' \(read.errors)")
            }
        }

        @Test("the viewer's token: 403 with the reason on shoot, enter, exit, live view, camera settings, the lens, marks and sharing; its page has no shutter and sees a new shot live; the operator's share panel gives the viewer link as a QR code; no URL the page loads carries the token, and no token is logged")
        func viewer() async throws {
            let folder = TemporaryDirectory("review-viewer")
            let operatorToken = "operator-7f3a9c21d4e8b6a0", viewerToken = "viewer-2b9e4f71c0d3a8e5"
            // The page listens on loopback here: the share link needs the address phones use.
            let (session, port) = try await webSession(folder, web: ", token: \(operatorToken), viewerToken: \(viewerToken), publicURL: http://studio.example:8080",
                                                       width: 1200, height: 800, verbose: true, yielding: true)
            await shoot(session, 1)
            let asViewer = ["Authorization": "Bearer \(viewerToken)"], asOperator = ["Authorization": "Bearer \(operatorToken)"]
            for (method, path) in [("POST", "/api/capture"), ("POST", "/api/enter"), ("POST", "/api/exit"), ("GET", "/live.mjpg"), ("GET", "/live/camera.mjpg"),
                                 ("GET", "/api/settings"), ("POST", "/api/settings"), ("POST", "/api/lens"), ("GET", "/api/share.svg")] {
                let reply = try await http(method, path, port: port, headers: asViewer)
                #expect(reply.status == 403 && (reply.json?["error"] as? String)?.isEmpty == false, "\(method) \(path): \(reply.status)")
            }
            let marks = Data(#"{"marks":[{"id":1,"rating":3}]}"#.utf8)
            let refused = try await http("POST", "/api/marks", port: port, headers: asViewer.merging(["Content-Type": "application/json"]) { $1 }, body: marks)
            #expect(refused.status == 403 && (refused.json?["fix"] as? String)?.contains("viewersMayMark") == true)
            #expect(try await http("POST", "/api/marks", port: port, headers: asOperator, body: marks).status == 200)
            #expect(try await http("GET", "/api/status", port: port).status == 401)
            let shell = try await http("GET", "/", port: port)
            #expect(shell.status == 200 && shell.headers["referrer-policy"] == "no-referrer", "the page holds no data: it loads without a token, and never sends one in a Referer")
            #expect(try await http("GET", "/api/shots", port: port, headers: asViewer).headers["referrer-policy"] == "no-referrer")

            // The viewer's page: once its event stream is open (the session logs it), a shot from stdin reaches it.
            let capture = "fetch('/api/capture', { method: 'POST', headers }).then((r) => r.status)"
            let controls = "JSON.stringify({ role: document.body.dataset.role, shutter: Boolean(document.getElementById('shutter')), share: Boolean(document.getElementById('share')) })"
            // Every URL the page loaded (images, the event stream, scripts), and its own address.
            let urls = "JSON.stringify([location.href].concat(performance.getEntriesByType('resource').map((e) => e.name)))"
            // (The shot may land before the page's first look: at least one shot, not exactly one.)
            async let page = browse(port, "/#token=\(viewerToken)", [
                "wait:document.body.dataset.ready == 'yes' && app.total >= 1", "eval:\(controls)", "eval:\(capture)",
                "wait:app.total == 2 && window.paints.some((p) => p.shot.endsWith('#2'))", "eval:\(urls)",
            ], session: session)
            // Its log line is the gate. (The browser may wait for another test's to finish: one runs at a time.)
            await session.waitForOutput("the viewer at 127.0.0.1 listens to /events", timeout: .seconds(240))
            session.send("capture\n")
            let run = try await page
            let shown = run.json(controls) as? [String: Any]
            #expect(shown?["role"] as? String == "viewer" && shown?["shutter"] as? Bool == false && shown?["share"] as? Bool == false, "\(run.output)")
            #expect(run.value(capture) as? Int == 403, "the viewer's page cannot shoot either")
            // The token went once to /api/session; no URL carries it, the address bar included.
            let loaded = run.json(urls) as? [String] ?? []
            #expect(loaded.count > 3 && loaded.contains { $0.contains("/api/photos/") || $0.contains("/api/shots/") } && !loaded.contains { $0.contains(viewerToken) },
                    "\(loaded)")

            let svg = try await http("GET", "/api/share.svg", port: port, headers: asOperator)
            try #require(svg.status == 200 && svg.headers["content-type"] == "image/svg+xml")
            try await rasterise(String(decoding: svg.body, as: UTF8.self), to: folder.file("share.pgm"))
            let read = try await runProgram(["zbarimg", "--raw", "-q", "--nodbus", folder.file("share.pgm")])
            #expect(read.text.trimmingCharacters(in: .newlines) == "http://studio.example:8080/#token=\(viewerToken)", "\(read.text) \(read.errors)")
            session.signal(SIGTERM)
            let outcome = await session.wait(timeout: .seconds(30))
            #expect(outcome.status == 0)
            #expect(!outcome.stderr.contains(operatorToken) && !outcome.stderr.contains(viewerToken), "a token in the log")
        }

        @Test("culling at the speed of the keyboard: 60 ratings typed across three shots all land, in order: the last typed is in the catalogue and the sidecars")
        func culling() async throws {
            let folder = TemporaryDirectory("review-culling")
            let (session, port) = try await webSession(folder, width: 800, height: 600, verbose: true, yielding: true)
            await shoot(session, 3)
            let typed = ["01234501234501234543", "54321054321054321012", "33333444445555500002"]  // newest first
            _ = try await browse(port, "/", [
                ready(3), "key:\(typed[0])", "key:ArrowLeft", "key:\(typed[1])", "key:ArrowLeft", "key:\(typed[2])",
                "wait:document.body.dataset.marksPending == '0'",
            ], session: session)
            await session.waitForOutput("60 marks") { $0.components(separatedBy: " marked: rating").count - 1 >= 60 }
            let shots = try #require(try await http("GET", "/api/shots", port: port).json?["shots"] as? [[String: Any]])
            #expect(shots.map { $0["rating"] as? Int } == typed.map { Int(String($0.last!)) }, "\(shots.map { $0["rating"] ?? "?" })")
            // The marks of each shot in the order typed (the log), and the sidecars.
            for (index, keys) in typed.enumerated() {
                let id = 3 - index
                let logged = session.stderrSoFar.split(separator: "\n").filter { $0.contains("shot \(id) marked: rating") }
                    .compactMap { $0.components(separatedBy: "marked: rating ").last?.prefix(1) }.map(String.init)
                #expect(logged == keys.map(String.init), "shot \(id): \(logged)")
                let sidecar = try #require(folder.names("out").first { $0.contains("000\(id)") && $0.hasSuffix(".xmp") })
                let rating = try await ExifTool.run(["-s3", "-XMP:Rating", folder.file("out/\(sidecar)")])
                #expect(rating.trimmingCharacters(in: .whitespacesAndNewlines) == String(keys.last!))
            }
            session.signal(SIGTERM)
            #expect(await session.wait(timeout: .seconds(30)).status == 0)
        }

        @Test("a mark made elsewhere (another client's POST /api/marks) shows at once on an open page's grid, a label that is markup shown as text; a tap on a touch button marks the shot in view")
        func marksLive() async throws {
            let folder = TemporaryDirectory("review-marks-live")
            let (session, port) = try await webSession(folder, width: 800, height: 600, verbose: true, yielding: true)
            await shoot(session, 2)
            let stars = "document.querySelector('#grid .cell[data-index=\"1\"] .stars-shown')"
            let dot = "document.querySelector('#grid .cell[data-index=\"1\"] .dot')"
            async let page = browse(port, "/#view=grid", [
                ready(2), "wait:\(stars) && \(stars).textContent == '★★★★★' && \(dot) && \(dot).title.includes('<b id=injected>')",
                "eval:document.getElementById('injected') === null",
                "click:mark-label-Green", "click:mark-pick-picked", "wait:document.body.dataset.marksPending == '0'",
            ], session: session)
            await session.waitForOutput("the page listens", timeout: .seconds(240)) { $0.contains("listens to /events") }
            let marked = try await http("POST", "/api/marks", port: port, headers: ["Content-Type": "application/json"], body: Data(#"{"marks":[{"id":1,"rating":5,"label":"\"><b id=injected>x</b>"}]}"#.utf8))
            #expect(marked.status == 200, "\(String(decoding: marked.body, as: UTF8.self))")
            // A label is free text (a sidecar may hold anything): the page shows it as text, never as markup.
            #expect(try await page.value("document.getElementById('injected') === null") as? Bool == true)
            let newest = try #require(try await http("GET", "/api/shots/2", port: port).json)
            #expect(newest["label"] as? String == "Green" && newest["pick"] as? String == "picked", "\(newest)")
            session.signal(SIGTERM)
            #expect(await session.wait(timeout: .seconds(30)).status == 0)
        }

        @Test("10,000 catalogued shots: the grid opens on one screen of thumbnails, and a jump to the end loads only the thumbnails on screen there (the image requests counted)")
        func tenThousand() async throws {
            let folder = TemporaryDirectory("review-10k")
            let out = folder.file("out")
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            let jpeg = try await offThePool { SyntheticJPEG.make(width: 96, height: 64, shot: 1) }
            try await offThePool { for index in 1...10_000 { try jpeg.writeTestFile("\(out)/IMG_\(String(format: "%05d", index)).JPG") } }
            // Catalogued beforehand by `shots rebuild` at a lower priority: cataloguing 10,000
            // files takes a core for seconds (debug build), and the tests beside this one need it.
            let rebuilt = try await runProgram(["nice", "-n", "10", try shutterpipeBinary(), "shots", "rebuild", out, "--catalogue", "\(out)/.shutterpipe/catalogue.sqlite"],
                                               timeout: .seconds(240))
            try #require(rebuilt.status == 0, "shots rebuild: \(rebuilt.errors)")
            let (session, port) = try await webSession(folder, width: 96, height: 64, verbose: true, yielding: true)
            let thumbnails = "performance.getEntriesByType('resource').filter((e) => e.name.includes('/thumbnail.jpg')).length"
            let screen = "JSON.stringify({ on: grid.onScreen(), images: document.querySelectorAll('#grid .cell img').length, last: document.querySelector('#grid .cell:last-child img') && document.querySelector('#grid .cell:last-child img').alt, oldest: app.shots[app.total - 1] && app.shots[app.total - 1].id, ready: window.gridReady })"
            let allShown = "[...document.querySelectorAll('#grid .cell img')].every((i) => i.complete) && document.querySelectorAll('#grid .cell img').length == grid.onScreen()[1] - grid.onScreen()[0]"
            let run = try await browse(port, "/#view=grid", [
                "wait:document.body.dataset.ready == 'yes' && app.total == 10000 && window.gridReady", "eval:\(screen)", "eval:\(thumbnails)",
                "eval:document.getElementById('grid').scrollTop = 1e9",
                "wait:grid.onScreen()[1] == 10000 && app.shots[9999] && \(allShown)", "eval:\(screen)", "eval:\(thumbnails)",
            ], session: session)
            let screens = run.steps.filter { $0["eval"] as? String == screen }.compactMap { ($0["value"] as? String).flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] } }
            let counts = run.steps.filter { $0["eval"] as? String == thumbnails }.compactMap { $0["value"] as? Int }
            try #require(screens.count == 2 && counts.count == 2, "\(run.output)")
            let first = try #require(screens[0]["on"] as? [Int]), end = try #require(screens[1]["on"] as? [Int])
            #expect(counts[0] == first[1] - first[0] && first[1] - first[0] > 0, "the first screen's thumbnails only: \(counts[0]) requests for \(first)")
            #expect(counts[1] == counts[0] + (end[1] - end[0]), "then the last screen's only: \(counts) for \(first) and \(end)")
            print("10,000 shots: the grid's first screen of \(first[1] - first[0]) thumbnails was complete \(screens[0]["ready"] ?? "?") ms after the page's start; \(counts[1]) thumbnails loaded in all")
            session.signal(SIGTERM)
            #expect(await session.wait(timeout: .seconds(30)).status == 0)
        }
    }
}

extension String {
    /// This text repeated and cut to `length` characters.
    func cycled(to length: Int) -> String {
        String(String(repeating: self, count: length / count + 1).prefix(length))
    }
}
