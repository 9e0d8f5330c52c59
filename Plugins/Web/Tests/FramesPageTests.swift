#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

/// A session of two virtual cameras on real libgphoto2 workers (A in JPEG, B in
/// RAW+JPEG), a web trigger and the catalogue.
func rigWebSession(_ folder: TemporaryDirectory, _ cameras: [FakeCamera], home: TemporaryDirectory, extra: String = "",
                   web: String = "") async throws -> (RunningProcess, UInt16) {
    let entries = cameras.enumerated().map { index, camera in
        "    - {name: \(String(UnicodeScalar(UInt8(65 + index)))), port: \"\(camera.portSpec)\"}"
    }.joined(separator: "\n")
    let config = try writeConfig("""
    version: 1
    session: rig
    backend:
      type: gphoto2
      cameras:
    \(entries)
    triggers:
      - type: stdin
      - {type: web, listen: "127.0.0.1:0"\(web)}
    sinks:
      - type: files
        directory: \(folder.file("out"))
        filename: "{seq:04}-{camera}.{ext}"
    \(extra)
    """, in: folder)
    let session = try await RunningProcess.start(program: "nice", ["-n", "10", try shutterpipeBinary(), "run", "--config", config, "--verbose"], in: folder.path,
                                     environment: ["HOME": home.path])
    guard let port = await webPort(session) else { throw TestSupportError("the web trigger did not start: \(session.stderrSoFar)") }
    return (session, port)
}

extension ReviewSuites {
    /// Issue 42's second defect: a shot of two cameras was one tile showing camera A; B's
    /// frame could not be seen, compared or rated, one rating went to both cameras'
    /// sidecars, and the RAW button opened B's RAW for A's picture.
    @Suite("web: a shot of two cameras shows, compares and marks each camera's frame", .serialized, .timeLimit(.minutes(5)))
    struct FramesPageTests {
        @Test("the grid shows both cameras' frames side by side; → and a key rate B's frame alone (its sidecars, not A's); the loupe steps frames with ↑ ↓ and shows the RAW button on B only; compare puts A and B side by side; Shift marks the whole shot; Ctrl-Z undoes a frame's reject; the camera filter narrows to B")
        func twoCameras() async throws {
            let folder = TemporaryDirectory("frames-page")
            let home = TemporaryDirectory("frames-home")
            let cameras = [try await FakeCamera(home: home), try await FakeCamera(["--raw-plus-jpeg"], home: home)]
            let (session, port) = try await rigWebSession(folder, cameras, home: home)
            await shoot(session, 2)
            let shots = try #require(try await http("GET", "/api/shots", port: port).json?["shots"] as? [[String: Any]])
            let newest = try #require(shots.first?["id"] as? Int)
            let frames = (shots.first?["frames"] as? [[String: Any]]) ?? []
            #expect(frames.map { $0["camera"] as? String } == ["A", "B"] && frames.map { ($0["files"] as? [Any])?.count } == [1, 2], "\(frames)")
            #expect(frames.map { $0["hasRAW"] as? Bool } == [false, true], "B's RAW is B's: \(frames)")

            let cell = "#grid .cell[data-index=\"0\"]"
            let grid = try await browse(port, "/#view=grid", [
                ready(2),
                "wait:document.querySelectorAll('\(cell) .frame img').length == 2 && [...document.querySelectorAll('#grid .cell img')].every((i) => i.complete && i.naturalWidth > 0)",
                "screenshot:\(folder.file("grid.png"))",
                "eval:JSON.stringify([...document.querySelectorAll('\(cell) .frame')].map((f) => f.dataset.camera))",
                "key:ArrowRight", "wait:document.body.dataset.frame == '\(newest)/B'", "key:4",
                "wait:document.body.dataset.marksPending == '0' && app.shots[0].frames[1].rating == 4 && app.shots[0].frames[0].rating == 0",
                "wait:document.querySelector('\(cell) .frame[data-camera=\"B\"] .stars-shown').textContent == '★★★★' && document.querySelector('\(cell) .frame[data-camera=\"A\"] .stars-shown').textContent == ''",
            ], session: session)
            #expect(grid.json("JSON.stringify([...document.querySelectorAll('\(cell) .frame')].map((f) => f.dataset.camera))") as? [String] == ["A", "B"])
            try keepArtefact(folder.file("grid.png"), as: "frames-grid.png")
            // B's rating is in B's sidecars alone.
            let out = folder.file("out")
            let names = try FileManager.default.contentsOfDirectory(atPath: out)
            let a = try #require(names.first { $0.hasSuffix("-A.jpg") && $0.hasPrefix("0002") })
            let bRaw = try #require(names.first { $0.hasSuffix("-B.cr2") && $0.hasPrefix("0002") })
            var tags = try await ExifTool.tags(["\(out)/\(a)", "\(out)/\(bRaw).xmp", "\(out)/" + bRaw.replacingOccurrences(of: ".cr2", with: ".xmp")])
            #expect(tags["\(out)/\(a)"]?.first { $0.key.hasSuffix(":Rating") } == nil, "A's JPEG is not rated: \(tags["\(out)/\(a)"] ?? [:])")
            #expect(!FileManager.default.fileExists(atPath: "\(out)/\(a).xmp"))
            for sidecar in ["\(out)/\(bRaw).xmp", "\(out)/" + bRaw.replacingOccurrences(of: ".cr2", with: ".xmp")] {
                #expect(tags[sidecar]?.first { $0.key.hasSuffix(":Rating") }?.value == "4", "\(sidecar): \(tags[sidecar] ?? [:])")
            }
            // A's picture has no RAW: never B's.
            let rawOfA = try await http("GET", "/api/shots/\(newest)/image.json?frame=A&from=raw", port: port)
            #expect(rawOfA.status == 404 && String(decoding: rawOfA.body, as: UTF8.self).contains("no RAW"), "\(rawOfA.status) \(String(decoding: rawOfA.body, as: UTF8.self))")

            _ = try await browse(port, "/#view=grid", [
                ready(2), "key:ArrowRight", "wait:document.body.dataset.frame == '\(newest)/B'", "key:Enter",
                "wait:loupe.caption.textContent.startsWith('shot \(newest) · B') && !document.getElementById('raw').hidden && window.paints.some((p) => p.id == \(newest) && p.camera == 'B')",
                "key:w", "wait:loupe.source() == '?frame=B&from=raw'",
                "key:ArrowUp", "wait:document.body.dataset.frame == '\(newest)/A' && document.getElementById('raw').hidden && window.paints.some((p) => p.id == \(newest) && p.camera == 'A')",
                "wait:loupe.caption.textContent.startsWith('shot \(newest) · A')",
                "key:c", "wait:compare.viewers.length == 2 && compare.viewers.map((v) => v.frame.camera).join() == 'A,B' && compare.viewers.every((v) => v.shot.id == \(newest))",
                "key:Shift+3", "wait:document.body.dataset.marksPending == '0' && app.shots[0].frames.every((f) => f.rating == 3)",
                "key:ArrowRight", "wait:document.body.dataset.compareFocus == '\(newest)' && document.body.dataset.frame == '\(newest)/B'", "key:x",
                "wait:document.body.dataset.marksPending == '0' && app.shots[0].frames[1].pick == 'rejected' && !app.shots[0].frames[0].pick",
                "wait:[...document.querySelectorAll('#compare .marks')].map((m) => m.textContent).join('|') == 'A ★★★|B ★★★ · rejected'",
                "key:Ctrl+z", "wait:document.body.dataset.marksPending == '0' && !app.shots[0].frames[1].pick",
                "key:g", "eval:(() => { const select = document.getElementById('filter-camera'); select.value = 'B'; select.onchange(); return true; })()",
                "wait:app.shots.length == 2 && [...document.querySelectorAll('#grid .cell')].every((c) => c.querySelectorAll('.frame').length == 1 && c.querySelector('.frame').dataset.camera == 'B')",
            ], session: session)
            let after = try #require(try await http("GET", "/api/shots/\(newest)", port: port).json)
            let marks = (after["frames"] as? [[String: Any]] ?? []).map { "\($0["camera"] ?? "")\($0["rating"] ?? "")\($0["pick"] as? String ?? "")" }
            #expect(marks == ["A3", "B3"], "each frame as the page left it: \(after)")
            tags = try await ExifTool.tags(["\(out)/\(a)"])
            #expect(tags["\(out)/\(a)"]?.first { $0.key.hasSuffix(":Rating") }?.value == "3", "the whole shot's mark reached A: \(tags)")
            session.signal(SIGTERM)
            #expect(await session.wait(timeout: .seconds(30)).status == 0)
        }
    }
}
