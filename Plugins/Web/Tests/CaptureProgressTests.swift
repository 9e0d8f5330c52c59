import Foundation
import TestSupport
import Testing

extension ReviewSuites {
    /// Issue 42's seventh defect: a 3–4 s capture showed nothing on the page.
    @Suite("web: the page shows a shot in flight", .serialized, .timeLimit(.minutes(3)))
    struct CaptureProgressTests {
        @Test("a capture held at the camera shows 'capturing' on the page (and to a viewer of the session), then nothing once it is stored; the answer's state follows")
        func capturing() async throws {
            let folder = TemporaryDirectory("review-progress")
            let gate = folder.file("gate")
            try Data().writeTestFile(gate)
            let config = try writeConfig("""
            version: 1
            session: progress
            backend: {type: file-stub, width: 640, height: 480, gate: \(gate)}
            triggers:
              - type: stdin
              - {type: web, listen: "127.0.0.1:0"}
            sinks: [{type: files, directory: \(folder.file("out"))}]
            """, in: folder)
            let session = try await RunningProcess.start(["run", "--config", config, "--verbose"], in: folder.path)
            let port = try #require(await webPort(session))
            async let page = browse(port, "/", [
                "wait:document.body.dataset.ready == 'yes'", "eval:(() => { post('capture'); return true; })()",
                "wait:document.getElementById('progress').textContent.startsWith('shot 1 capturing')",
                "eval:document.getElementById('progress').textContent",
                // The screenshot is the test's gate: once it exists, the page has shown the shot in flight.
                "screenshot:\(folder.file("seen.png"))",
                "wait:app.total == 1 && document.getElementById('progress').textContent == ''",
                "eval:document.getElementById('state').textContent",
            ], session: session)
            // Released once the page has shown the shot held at the camera (its screenshot).
            #expect(await eventually(timeout: .seconds(120)) { FileManager.default.fileExists(atPath: folder.file("seen.png")) || !session.isRunning })
            try "go\n".writeTestFile(gate)
            let run = try await page
            let shown = run.value("document.getElementById('progress').textContent") as? String ?? ""
            #expect(shown.hasPrefix("shot 1 capturing") && shown.hasSuffix(" s"), "\(shown)")
            #expect((run.value("document.getElementById('state').textContent") as? String)?.hasPrefix("photoSuccess") == true, "\(run.output)")
            session.signal(SIGTERM)
            #expect(await session.wait(timeout: .seconds(30)).status == 0)
        }
    }
}
