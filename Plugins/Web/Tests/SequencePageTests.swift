#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

extension ReviewSuites {
    /// Issue 45: a sequence from the page.
    @Suite("web: the operator runs a sequence from the page", .serialized, .timeLimit(.minutes(3)))
    struct SequencePageTests {
        @Test("the page offers the config's sequences; Run shoots a focus stack of 4 on the virtual camera through libgphoto2, each frame on the page as a shot, how far it is said while it runs, and the end said ('sequenceDone stack: 4 of 4 taken'), the four one group on the grid once recorded, the sharpest marked as Pillow measures it, collapsed to one cell and back; a viewer cannot run one, an unknown one is 404 with the names")
        func runFromPage() async throws {
            let folder = TemporaryDirectory("sequence-page")
            let home = TemporaryDirectory("sequence-page-home")
            let camera = try await FakeCamera(["--lens"], home: home)
            let config = try writeConfig("""
            version: 1
            session: stack
            backend: {type: gphoto2, port: "\(camera.portSpec)"}
            triggers:
              - type: stdin
              - {type: web, listen: "127.0.0.1:0", token: "operator-secret-1234567890", viewerToken: "viewer-secret-1234567890"}
            sinks: [{type: files, directory: \(folder.file("out")), filename: "{sequence}-{frame:02}.{ext}"}]
            sequences:
              stack: {kind: focus-stack, frames: 4, from: 1600, step: 2, settle: 0s}
              bracket: {kind: bracket, frames: 3, setting: shutterspeed}
            """, in: folder)
            let session = try await RunningProcess.start(program: try shutterpipeBinary(), ["run", "--config", config], in: folder.path, environment: ["HOME": home.path])
            let port = try #require(await webPort(session), "\(session.stderrSoFar)")
            let run = try await browse(port, "/#view=grid&token=operator-secret-1234567890", [
                "wait:document.body.dataset.ready == 'yes' && !document.getElementById('sequences').hidden",
                "eval:JSON.stringify([...document.querySelectorAll('#sequence-name option')].map((o) => o.value))",
                "eval:(() => { document.getElementById('sequence-name').value = 'stack'; return true; })()",
                "click:run-sequence",
                "wait:(document.body.dataset.sequence || '').startsWith('sequence') && app.total == 4",
                "eval:document.body.dataset.sequence",
                // While it ran, each frame's answer said how far it was.
                "eval:JSON.stringify(window.sequenceProgress || [])",
                "eval:JSON.stringify(app.shots.map((s) => s.state))",
                // Once recorded, the frames are one group on the grid: a badge each, a band open at the first and closed at the last.
                "wait:app.shots.length == 4 && app.shots.every((s) => s.sequence) && document.querySelectorAll('.cell .sequence').length == 4",
                "eval:JSON.stringify([...document.querySelectorAll('.cell .sequence')].map((e) => e.textContent).sort())",
                "eval:document.querySelectorAll('.cell.sequence-first').length + ',' + document.querySelectorAll('.cell.sequence-last').length + ',' + document.querySelectorAll('.cell.in-sequence').length",
                // The stack's sharpest frame, measured by the page from the thumbnails it shows.
                "wait:document.querySelectorAll('.cell.sharpest').length == 1",
                "eval:app.shots.find((s) => grid.sharpest.has(s.id)).sequence.index",
                // One per sequence: the run is one cell (its first frame) standing for the four; and back.
                "eval:(() => { const box = document.getElementById('filter-collapse'); box.checked = true; box.dispatchEvent(new Event('change')); return true; })()",
                "wait:app.total == 1 && document.querySelectorAll('.cell .sequence').length == 1",
                "eval:document.querySelector('.cell .sequence').textContent + ',' + app.shots[0].sequence.index + ',' + document.querySelectorAll('.cell.sequence-first.sequence-last').length",
                "eval:(() => { const box = document.getElementById('filter-collapse'); box.checked = false; box.dispatchEvent(new Event('change')); return true; })()",
                "wait:app.total == 4 && document.querySelectorAll('.cell .sequence').length == 4",
            ], session: session)
            // The same measure, the variance of the Laplacian, by Pillow over each stored photo.
            let measured = try await runProgram(["/usr/bin/python3", "-c", """
            import json, sys
            from PIL import Image, ImageFilter, ImageStat
            values = []
            for path in sys.argv[1:]:
                grey = Image.open(path).convert('L')
                values.append(ImageStat.Stat(grey.filter(ImageFilter.Kernel((3, 3), [0, 1, 0, 1, -4, 1, 0, 1, 0], scale=1, offset=128))).var[0])
            print(json.dumps(values))
            """] + (1...4).map { folder.file(String(format: "out/stack-%02d.jpg", $0)) })
            let values = (try? JSONSerialization.jsonObject(with: measured.data) as? [Double]) ?? []
            let sharpest = values.indices.max { values[$0] < values[$1] }.map { $0 + 1 }
            #expect(sharpest != nil && run.value("app.shots.find((s) => grid.sharpest.has(s.id)).sequence.index") as? Int == sharpest, "Pillow: \(values) \(run.output)")
            #expect(run.value("document.querySelector('.cell .sequence').textContent + ',' + app.shots[0].sequence.index + ',' + document.querySelectorAll('.cell.sequence-first.sequence-last').length") as? String == "stack ×4,1,1", "\(run.output)")
            // The catalogue's answer itself: one shot for the run.
            let collapsed = try await http("GET", "/api/shots?collapse=sequences", port: port, headers: ["Authorization": "Bearer operator-secret-1234567890"])
            #expect(collapsed.json?["total"] as? Int == 1 && ((collapsed.json?["shots"] as? [[String: Any]])?.first?["sequence"] as? [String: Any])?["index"] as? Int == 1, "\(collapsed.json ?? [:])")
            #expect(run.json("JSON.stringify([...document.querySelectorAll('.cell .sequence')].map((e) => e.textContent).sort())") as? [String] == ["stack 1/4", "stack 2/4", "stack 3/4", "stack 4/4"], "\(run.output)")
            #expect(run.value("document.querySelectorAll('.cell.sequence-first').length + ',' + document.querySelectorAll('.cell.sequence-last').length + ',' + document.querySelectorAll('.cell.in-sequence').length") as? String == "1,1,4", "\(run.output)")
            #expect(run.json("JSON.stringify([...document.querySelectorAll('#sequence-name option')].map((o) => o.value))") as? [String] == ["bracket", "stack"])
            #expect(run.value("document.body.dataset.sequence") as? String == "sequenceDone stack: 4 of 4 taken", "\(run.output)")
            #expect(run.json("JSON.stringify(window.sequenceProgress || [])") as? [String] == ["1/4", "2/4", "3/4", "4/4"], "\(run.output)")
            // Each a stored shot: answered (photoSuccess), or already recorded by the catalogue (stored).
            #expect((run.json("JSON.stringify(app.shots.map((s) => s.state))") as? [String] ?? []).filter { ["photoSuccess", "stored"].contains($0) }.count == 4,
                    "\(run.output)")
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.file("out")).filter { $0.hasSuffix(".jpg") }.sorted()
            #expect(names == ["stack-01.jpg", "stack-02.jpg", "stack-03.jpg", "stack-04.jpg"])
            let viewer = try await http("POST", "/api/sequence", port: port, headers: ["Authorization": "Bearer viewer-secret-1234567890", "Content-Type": "application/json"],
                                        body: Data("{\"name\":\"stack\"}".utf8))
            #expect(viewer.status == 403)
            let unknown = try await http("POST", "/api/sequence", port: port, headers: ["Authorization": "Bearer operator-secret-1234567890", "Content-Type": "application/json"],
                                         body: Data("{\"name\":\"stak\"}".utf8))
            #expect(unknown.status == 404 && (unknown.json?["fix"] as? String) == "the sequences are: bracket, stack", "\(unknown.json ?? [:])")
            session.signal(SIGTERM)
            #expect(await session.wait(timeout: .seconds(60)).status == 0)
        }
    }
}
