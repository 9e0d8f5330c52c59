import Foundation
import ShutterPipeKit
import TestSupport
import Testing

@Suite("web: where the files went, on the page", .timeLimit(.minutes(4)))
struct CopiesPageTests {
    @Test("the mirror disk plugged in while the page is open: the copies made then appear in the loupe's details, live, without a reload")
    func copiesShownLive() async throws {
        let folder = TemporaryDirectory("web-copies")
        let mirror = folder.file("backup")  // not there yet: the copies wait for it
        let config = try writeConfig("""
        version: 1
        session: web
        backend: {type: file-stub, width: 320, height: 240}
        triggers:
          - type: stdin
          - {type: web, listen: "127.0.0.1:0"}
        sinks: [{type: files, directory: \(folder.file("out")), mirror: [\(mirror)]}]
        """, in: folder)
        let session = try await RunningProcess.start(["run", "--config", config, "--verbose"], in: folder.path)
        let port = try #require(await webPort(session), "\(session.stderrSoFar)")
        await shoot(session, 1)
        let details = "document.getElementById('exposure').textContent"
        async let browsing = browse(port, "/", [
            ready(1), "eval:\(details)",
            "click:shutter", "wait:app.total == 2 && app.shots.filter((s) => s && s.id).length == 2",
            "wait:app.shots.every((s) => s && (s.files[0].copies || []).length == 1) && \(details).includes('Copiesbackup')", "eval:\(details)",
        ], session: session)
        // Both shots recorded (the page has them): the disk comes, the queued copies go.
        await session.waitForOutput("2 shots recorded") { shotsRecorded(in: $0) >= 2 }
        try FileManager.default.createDirectory(atPath: mirror, withIntermediateDirectories: true)
        let page = try await browsing
        let shown = page.steps.compactMap { $0["value"] as? String }
        #expect(shown.count == 2 && !shown[0].contains("Copies") && shown[1].contains("Copiesbackup"), "\(page.output)")
        session.closeInput()
        session.signal(SIGTERM)
        #expect(await session.wait(timeout: .seconds(30)).status == 0)
    }
}
