#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeKit
import TestSupport
import Testing

@Suite("web: the session label from the page, in a real browser", .timeLimit(.minutes(4)))
struct LabelPageTests {
    @Test("the operator types a label and presses Enter; the next shot from the page's shutter carries it in its name; a viewer's POST /api/label is refused")
    func labelFromThePage() async throws {
        let folder = TemporaryDirectory("web-label")
        let config = try writeConfig("""
        version: 1
        session: web
        backend: {type: file-stub, width: 320, height: 240}
        triggers:
          - type: stdin
          - {type: web, listen: "127.0.0.1:0", token: operator-secret-0123456789, viewerToken: viewer-secret-0123456789}
        sinks: [{type: files, directory: \(folder.file("out")), filename: "{label}-{seq:03}.{ext}"}]
        """, in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path)
        let port = try #require(await webPort(session), "\(session.stderrSoFar)")
        let state = "document.getElementById('state').textContent"
        let page = try await browse(port, "/#token=operator-secret-0123456789", [
            "wait:document.body.dataset.ready == 'yes'",
            "click:session-label", "key:ORDER-9", "key:Enter",
            "wait:\(state).startsWith('label ORDER-9')",
            "click:shutter", "wait:\(state).includes('ORDER-9-001.jpg')", "eval:\(state)",
        ], session: session)
        #expect(page.steps.contains { ($0["value"] as? String)?.hasPrefix("photoSuccess") == true }, "\(page.output)")
        #expect(folder.names("out").filter { $0.hasSuffix(".jpg") } == ["ORDER-9-001.jpg"])
        let viewer = try await http("POST", "/api/label", port: port, headers: ["Authorization": "Bearer viewer-secret-0123456789"], body: Data(#"{"label":"X"}"#.utf8))
        #expect(viewer.status == 403, "\(viewer)")
        session.signal(SIGTERM)  // the web trigger keeps a session running after stdin ends
        #expect(await session.wait(timeout: .seconds(30)).status == 0)
        #expect(session.stderrSoFar.contains("label 'ORDER-9' from web"))
    }
}
