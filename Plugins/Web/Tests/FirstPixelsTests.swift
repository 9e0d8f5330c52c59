#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

extension ReviewSuites {
    /// Issue 43: the picture before the file lands.
    @Suite("web: first pixels before the file lands", .serialized, .timeLimit(.minutes(4)))
    struct FirstPixelsTests {
        @Test("a shot whose download the camera holds after its first packet is on the page with the camera's thumbnail (red, 160×120, the loupe says 'camera thumbnail'); once the rest comes the preview replaces it (the photo's blue, 1500 px, 'preview'); the early picture stays served for a page still showing it")
        func thumbnailFirst() async throws {
            let folder = TemporaryDirectory("first-pixels")
            let home = TemporaryDirectory("first-pixels-home")
            let images = folder.file("images")
            try FileManager.default.createDirectory(atPath: images, withIntermediateDirectories: true)
            // 3000×2000 of blue noise (several MB: the download is held after its first
            // 512 KiB), with a solid red 160×120 EXIF thumbnail.
            _ = try await runProgram(["/usr/bin/python3", "\(repositoryRoot)/Tests/Browser/pixels.py", "thumbnailed", "\(images)/IMG_0001.JPG", "3000", "2000"])
            let gate = folder.file("download-gate")
            try Data().writeTestFile(gate)
            let camera = try await FakeCamera(["--images", images, "--download-gate", gate], home: home)
            let (session, port) = try await rigWebSession(folder, [camera], home: home)
            let centre = "(() => { const c = document.createElement('canvas'); c.width = c.height = 1; const g = c.getContext('2d'); g.drawImage(loupe.preview, -Math.floor(loupe.preview.naturalWidth / 2), -Math.floor(loupe.preview.naturalHeight / 2)); return Array.from(g.getImageData(0, 0, 1, 1).data).slice(0, 3).join(','); })()"
            let early = "JSON.stringify([document.body.dataset.shown, loupe.caption.textContent, loupe.preview.naturalWidth, \(centre), loupe.preview.src.includes('/api/inflight/')])"
            async let page = browse(port, "/#view=loupe", [
                "wait:document.body.dataset.ready == 'yes'", "eval:(() => { post('capture'); return true; })()",
                "wait:(document.body.dataset.shown || '').startsWith('camera thumbnail') && loupe.shot.inFlight && window.paints.length > 0",
                "eval:\(early)",
                // The screenshot is the test's gate: once it exists, the page has painted the thumbnail.
                "screenshot:\(folder.file("early.png"))",
                "wait:(document.body.dataset.shown || '').startsWith('preview') && app.total == 1",
                "eval:\(early)",
            ], session: session)
            #expect(await eventually(timeout: .seconds(150)) { FileManager.default.fileExists(atPath: folder.file("early.png")) || !session.isRunning })
            // The early picture is served while the shot is in flight.
            let inFlight = try await http("GET", "/api/inflight/1/preview.jpg", port: port)
            #expect(inFlight.status == 200 && inFlight.body.prefix(2) == Data([0xFF, 0xD8]), "\(inFlight.status)")
            try "go\n".writeTestFile(gate)
            let run = try await page
            let shown = run.values("\(early)").compactMap { ($0 as? String).flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [Any] } }
            try #require(shown.count == 2, "\(run.output)")
            #expect((shown[0][0] as? String)?.hasPrefix("camera thumbnail 160×120") == true, "\(shown[0])")
            #expect((shown[0][1] as? String)?.contains("in flight") == true && shown[0][2] as? Int == 160 && shown[0][4] as? Bool == true, "\(shown[0])")
            let red = (shown[0][3] as? String ?? "").split(separator: ",").compactMap { Int($0) }
            #expect(red.count == 3 && red[0] > 200 && red[1] < 60 && red[2] < 60, "the thumbnail's red: \(shown[0])")
            // The sharp picture: the one decoded as the bytes came (kept on screen) or the stored file's, the same photo.
            #expect((shown[1][0] as? String)?.hasPrefix("preview") == true && (shown[1][2] as? Int ?? 0) >= 1000, "\(shown[1])")
            let blue = (shown[1][3] as? String ?? "").split(separator: ",").compactMap { Int($0) }
            #expect(blue.count == 3 && blue[2] > 150 && blue[0] < 120, "the photo's blue: \(shown[1])")
            // Kept a little after (the latest few shots'), for a page still showing it; a shot never seen is 404.
            #expect(try await http("GET", "/api/inflight/1/preview.jpg", port: port).status == 200)
            #expect(try await http("GET", "/api/inflight/99/preview.jpg", port: port).status == 404)
            try keepArtefact(folder.file("early.png"), as: "first-pixels.png")
            session.signal(SIGTERM)
            #expect(await session.wait(timeout: .seconds(60)).status == 0)
        }

        @Test("a photo without a thumbnail: its preview, made once (by the camera worker as the bytes came, which it says it sends; by the page from the bytes only if it does not come), is shown in the shot's place while the sinks still work on it (the answer held by a hook), and is the stored file's preview afterwards (not decoded again)")
        func sharpBeforeStored() async throws {
            let folder = TemporaryDirectory("sharp-before-stored")
            let home = TemporaryDirectory("sharp-before-stored-home")
            let images = folder.file("images")
            try FileManager.default.createDirectory(atPath: images, withIntermediateDirectories: true)
            _ = try await runProgram(["/usr/bin/python3", "\(repositoryRoot)/Tests/Browser/pixels.py", "noise", "\(images)/IMG_0001.JPG", "3000", "2000"])
            let gate = folder.file("store-gate")
            try Data().writeTestFile(gate)
            let camera = try await FakeCamera(["--images", images], home: home)
            // The answer waits for the test: a hook (after the files sink: a processing sink
            // runs after the archival ones) that returns once the gate says so.
            let config = try writeConfig("""
            version: 1
            session: sharp
            backend: {type: gphoto2, port: "\(camera.portSpec)"}
            triggers:
              - type: stdin
              - {type: web, listen: "127.0.0.1:0"}
            sinks:
              - {type: files, directory: \(folder.file("out"))}
              - type: command
                command: [/bin/sh, -c, 'if [ "$ACTION" = download ]; then while ! grep -q go \(gate); do sleep 0.02; done; fi', hook]
                failPhoto: true
                timeout: 120s
            """, in: folder)
            let session = try await RunningProcess.start(program: try shutterpipeBinary(), ["run", "--config", config, "--verbose"], in: folder.path,
                                             environment: ["HOME": home.path])
            let port = try #require(await webPort(session), "\(session.stderrSoFar)")
            let state = "JSON.stringify([document.body.dataset.shown, loupe.caption.textContent, loupe.preview.naturalWidth, document.getElementById('progress').textContent])"
            async let page = browse(port, "/#view=loupe", [
                "wait:document.body.dataset.ready == 'yes'", "eval:(() => { post('capture'); return true; })()",
                "wait:(document.body.dataset.shown || '').startsWith('preview') && loupe.shot.inFlight && window.paints.length > 0",
                "eval:\(state)",
                "screenshot:\(folder.file("sharp.png"))",
                "wait:(document.body.dataset.shown || '').startsWith('preview') && app.total == 1 && !app.shots[0].inFlight && ['photoSuccess', 'stored'].includes(app.shots[0].state)",
                "eval:\(state)",
            ], session: session)
            #expect(await eventually(timeout: .seconds(150)) { FileManager.default.fileExists(atPath: folder.file("sharp.png")) || !session.isRunning })
            try "go\n".writeTestFile(gate)
            let run = try await page
            let shown = run.values("\(state)").compactMap { ($0 as? String).flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [Any] } }
            try #require(shown.count == 2, "\(run.output)")
            #expect((shown[0][1] as? String)?.contains("in flight") == true && (shown[0][0] as? String)?.hasPrefix("preview 1500 px") == true, "\(shown[0])")
            #expect((shown[0][3] as? String)?.contains("storing") == true, "shown while the sinks store it: \(shown[0])")
            #expect((shown[1][0] as? String)?.hasPrefix("preview 1500 px") == true, "\(shown[1])")
            session.signal(SIGTERM)
            let outcome = await session.wait(timeout: .seconds(60))
            #expect(outcome.status == 0)
            // Made once: the camera worker's (it said it would send one), or, had it not come
            // within a second on a busy machine, from the bytes here; never both, and the
            // stored file's preview is that one, not decoded again from the file.
            let workers = outcome.stderr.contains("preview of shot 1: the backend's, as it said it would send one; not decoded here")
            let ours = outcome.stderr.contains("preview of shot 1 made from its bytes before they were stored")
            #expect(workers != ours, "made once: \(outcome.stderr)")
            #expect(!outcome.stderr.contains("IMG_0001.jpg' made in") && !outcome.stderr.contains(".jpg' made in"), "decoded again from the file: \(outcome.stderr)")
        }
    }
}
