#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

/// The first whole JPEG in the pieces of a `/live/….mjpg` stream.
func firstLiveFrame(_ pieces: [TimedPiece]) -> Data? {
    let data = pieces.reduce(Data()) { $0 + $1.data }
    guard let length = data.range(of: Data("Content-Length: ".utf8)), let end = data.range(of: Data("\r\n\r\n".utf8), in: length.upperBound..<data.endIndex),
          let count = Int(String(decoding: data[length.upperBound..<end.lowerBound], as: UTF8.self)), data.endIndex - end.upperBound >= count else { return nil }
    return data[end.upperBound..<end.upperBound + count]
}

/// The page's steps that wait until `camera`'s tile has painted `count` more frames.
func afterFrames(_ camera: String, _ count: Int = 3) -> [String] {
    let state = "window.liveState[\(jsString(camera))]"
    return ["eval:window.framesBefore = \(state).frames", "wait:\(state).frames >= window.framesBefore + \(count)"]
}

func jsString(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "\\'") + "'" }

/// A PNG a page step returned as a data URL, written to `path`.
func writeDataURL(_ value: Any?, to path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let url = try #require(value as? String, sourceLocation: sourceLocation)
    let data = try #require(Data(base64Encoded: String(url.drop { $0 != "," }.dropFirst())), sourceLocation: sourceLocation)
    try data.writeTestFile(path)
}

extension ReviewSuites {
    @Suite("web: live view on the page — overlays, ghost, magnifier, peaking, lens and settings (real libgphoto2, Chromium, Pillow)", .timeLimit(.minutes(4)))
    struct LiveViewPageTests {
        @Test("framing: thirds and a 16:9 mask are drawn over the stream, and the ghost of a catalogue shot paints more of itself the higher its opacity; a camera without focus drive shows no lens buttons")
        func framing() async throws {
            let folder = TemporaryDirectory("live-framing")
            let camera = try await FakeCamera()
            let (session, port) = try await liveSession(camera, in: folder)
            session.send("enter\n")
            #expect(await session.waitForOutput("enteredPhotoMode", on: .stdout))
            for shot in 1...2 {  // the ghost: shot 2 (live frames draw shot 1's picture)
                session.send("capture\n")
                #expect(await session.waitForOutput(on: .stdout, "answer \(shot)") { $0.components(separatedBy: "photoSuccess").count == shot + 1 })
            }
            let tile = "window.liveState.camera", shots = (1...5).map { folder.file("screen-\($0).png") }
            func set(_ id: String, _ value: String) -> String { "eval:$('\(id)').value = '\(value)'; liveView.redraw(); true" }
            let run = try await browse(port, "/", [
                "wait:document.body.dataset.ready === 'yes' && app.shots.length === 2 && app.shots[0].id && app.shots[0].preview",
                "click:ghost",
                "wait:app.view === 'live' && liveView.ghost && \(tile) && \(tile).frames > 2 && document.body.dataset.settingsLoaded === 'yes'",
                set("ghost-opacity", "0")] + afterFrames("camera") + ["screenshot:\(shots[0])",
                set("overlay-grid", "thirds")] + afterFrames("camera") + ["screenshot:\(shots[1])",
                set("overlay-grid", ""), set("overlay-mask", "16:9")] + afterFrames("camera") + ["screenshot:\(shots[2])",
                set("overlay-mask", ""), set("ghost-opacity", "30")] + afterFrames("camera") + ["screenshot:\(shots[3])",
                set("ghost-opacity", "90")] + afterFrames("camera") + ["screenshot:\(shots[4])",
                "eval:JSON.stringify(liveView.tiles.get('camera').frameBox())",
                "eval:document.querySelectorAll('.live-tile .lens button').length",
                "eval:document.querySelector('.live-tile .lens').hidden",
                "eval:$('ghost-name').textContent",
            ], session: session)
            let box = try #require(run.json("JSON.stringify(liveView.tiles.get('camera').frameBox())") as? [String: Double])
            let (x, y, w, h) = (Int(box["x"]!), Int(box["y"]!), Int(box["width"]!), Int(box["height"]!))
            #expect(w > 300 && h > 200, "the frame is shown: \(box)")
            func difference(_ a: Int, _ b: Int, _ rx: Int, _ ry: Int, _ rw: Int, _ rh: Int) async throws -> Double {
                try await pillow(["compare", shots[a], String(rx), String(ry), shots[b], String(rx), String(ry), String(rw), String(rh)])["mean"] as? Double ?? -1
            }
            // The regions compared stay clear of the band where the live frame's marker moves
            // (the middle eighth of its height).
            // Thirds: a line at a third of the width; the frame between the lines is as it was.
            let onLine = try await difference(0, 1, x + w / 3 - 2, y + h / 5, 5, h / 10)
            let between = try await difference(0, 1, x + w / 2 - 10, y + h / 5, 20, h / 10)
            #expect(onLine > 8 && between < 1, "thirds: \(onLine) on the line, \(between) between the lines")
            // 16:9 on a 4:3 frame: the top and bottom eighths are darkened, the middle is not.
            let masked = try await difference(0, 2, x + w / 4, y + h - h / 16 - 4, w / 2, 8)
            let open = try await difference(0, 2, x + w / 4, y + h / 4, w / 2, 8)
            #expect(masked > 15 && open < 1, "mask: \(masked) in the masked band, \(open) inside the frame")
            // The ghost: more of it at 90 % than at 30 %, and none at 0 %.
            let region = (x + w / 4, y + h / 8, w / 2, h / 4)
            let faint = try await difference(0, 3, region.0, region.1, region.2, region.3)
            let strong = try await difference(0, 4, region.0, region.1, region.2, region.3)
            #expect(faint > 1 && strong > 2 * faint, "ghost: \(faint) at 30 %, \(strong) at 90 % (from 0 %)")
            #expect(run.value("document.querySelectorAll('.live-tile .lens button').length") as? Int == 0, "the virtual camera without --lens has no focus drive")
            #expect(run.value("document.querySelector('.live-tile .lens').hidden") as? Bool == true)
            #expect((run.value("$('ghost-name').textContent") as? String)?.contains("#2") == true, "\(run.output.suffix(500))")
            session.signal(SIGTERM)
            #expect(await session.wait(timeout: .seconds(30)).status == 0)
        }

        @Test("focus: peaking marks more pixels with the lens at the sharp position than 20 steps away; the lens buttons move the virtual lens; the 10× magnifier shows the frame's own pixels, each a 10×10 block, as Pillow reads the frame")
        func focus() async throws {
            let folder = TemporaryDirectory("live-focus")
            let camera = try await FakeCamera(["--lens", "--focus-at", "800", "--sharp-at", "1800"])
            let (session, port) = try await liveSession(camera, in: folder)
            let tile = "window.liveState.camera", canvas = "liveView.tiles.get('camera').canvas.toDataURL('image/png')"
            let run = try await browse(port, "/#view=live", [
                "wait:document.body.dataset.ready === 'yes' && \(tile) && \(tile).frames > 2 && document.body.dataset.settingsLoaded === 'yes'",
                "eval:$('peaking').checked = true"] + afterFrames("camera") + [
                "eval:window.blurred = \(tile).peaking.marked",
                "click:lens-0-far-3", "wait:window.lensAnswers.length === 1",
                "click:lens-0-far-3", "wait:window.lensAnswers.length === 2"] + afterFrames("camera", 4) + [
                "eval:window.sharp = \(tile).peaking.marked",
                // A browser without WebCodecs reads the frame back from a canvas: the same marks.
                "eval:liveView.tiles.get('camera').work.copyWorks = false; true"] + afterFrames("camera") + [
                "eval:window.sharpFromCanvas = \(tile).peaking.marked",
                "eval:JSON.stringify([window.blurred, window.sharp, \(tile).peaking.ms, window.sharpFromCanvas])",
                "click:lens-0-near-1", "wait:window.lensAnswers.length === 3",
                "click:lens-0-far-1", "wait:window.lensAnswers.length === 4",
                "eval:JSON.stringify(window.lensAnswers.map((a) => a.ok && a.body.applied[0].value))",
                "eval:$('peaking').checked = false; $('magnify').value = '10'; liveView.redraw(); true"] + afterFrames("camera") + [
                "eval:\(canvas)",
                "eval:JSON.stringify(\(tile).magnifier)",
            ], session: session)
            let figures = try #require(run.json("JSON.stringify([window.blurred, window.sharp, \(tile).peaking.ms, window.sharpFromCanvas])") as? [Double], "\(run.output.suffix(1500))")
            #expect(figures[1] > 3 * max(figures[0], 1), "peaking marked \(Int(figures[0])) pixels 20 steps away, \(Int(figures[1])) at the sharp position")
            #expect(abs(figures[3] - figures[1]) <= 0.02 * figures[1], "the canvas's read-back marked \(Int(figures[3])), WebCodecs' copy \(Int(figures[1]))")
            let moves = run.json("JSON.stringify(window.lensAnswers.map((a) => a.ok && a.body.applied[0].value))") as? [String]
            #expect(moves == ["1300 mm", "1800 mm", "1750 mm", "1800 mm"], "\(run.output.suffix(1500))")
            for distance in [1300, 1800, 1750] {
                #expect(camera.logText.contains("property 0x5009 set to \(distance): taken"), "the virtual lens moved to \(distance) mm: \(camera.logText.suffix(800))")
            }
            // The magnifier against a frame the test reads itself (the lens is still now, sharp).
            try writeDataURL(run.value(canvas), to: folder.file("magnified.png"))
            let geometry = try #require(run.json("JSON.stringify(\(tile).magnifier)") as? [String: Int])
            #expect(geometry["zoom"] == 10 && geometry["width"] == 64 && geometry["height"] == 48, "a 640×480 frame at 10×: \(geometry)")
            let pieces = try await httpStreamTimed("/live/camera.mjpg", port: port, for: .seconds(30)) { firstLiveFrame($0) != nil }
            try #require(firstLiveFrame(pieces)).writeTestFile(folder.file("frame.jpg"))
            let compared = try await pillow(["magnified", folder.file("frame.jpg"), folder.file("magnified.png")]
                                            + ["x0", "y0", "width", "height", "zoom", "ox", "oy"].map { String(geometry[$0] ?? -1) })
            let mean = compared["mean"] as? Double ?? 99, smooth = compared["smoothMean"] as? Double ?? 0
            #expect(mean < 1 && smooth > 5 * max(mean, 0.5), "the magnifier is \(mean) from the frame's pixels, an upscaled preview would be \(smooth): \(compared)")
            session.signal(SIGTERM)
            #expect(await session.wait(timeout: .seconds(30)).status == 0)
        }

        @Test("a rig: both cameras' streams on the page at once, through a capture; lens buttons only on the camera that can drive its lens; a setting changed from the page is read back by shutterpipe get, and a change to every camera that one refuses shows that camera's reason and changes none")
        func rig() async throws {
            let folder = TemporaryDirectory("live-rig"), home = TemporaryDirectory("live-rig-home")
            let cameras = [try await FakeCamera(["--lens"], home: home), try await FakeCamera(["--iso-choices", "100,200,400"], home: home)]
            let socket = folder.file("rig.sock")
            let environment = ["HOME": home.path]
            let session = try await liveRigSession(cameras, in: folder, home: home, triggers: ["{type: socket, path: \(socket)}"])
            let port = try #require(await webPort(session), "\(session.stderrSoFar)")
            func change(_ camera: String, _ key: String, _ value: String) -> String {
                "eval:(() => { $('settings-camera').value = '\(camera)'; cameraControls.fill(); const c = $('setting-\(key)'); c.value = '\(value)'; c.dispatchEvent(new Event('change')); return true })()"
            }
            let both = "window.liveState.A && window.liveState.B"
            let run = try await browse(port, "/#view=live", [
                "wait:document.body.dataset.ready === 'yes' && \(both) && window.liveState.A.frames > 5 && window.liveState.B.frames > 5 && document.body.dataset.settingsLoaded === 'yes'",
                "eval:document.querySelectorAll('.live-tile').length",
                "eval:window.before = [window.liveState.A.frames, window.liveState.B.frames]; JSON.stringify(window.before)",
                "click:shutter", "wait:$('state').textContent.startsWith('photoSuccess')",
                "eval:window.answered = [window.liveState.A.frames, window.liveState.B.frames]; JSON.stringify(window.answered)",
                "wait:window.liveState.A.frames >= window.answered[0] + 10 && window.liveState.B.frames >= window.answered[1] + 10",
                "eval:JSON.stringify([!!$('lens-0-far-1'), document.querySelector('.live-tile[data-camera=B] .lens').hidden, document.querySelectorAll('.live-tile[data-camera=B] .lens button').length])",
                change("A", "iso", "1600"), "wait:window.settingsAnswers.length === 1",
                "eval:$('settings-state').textContent",
                change("", "iso", "800"), "wait:window.settingsAnswers.length === 2",
                "eval:JSON.stringify([window.settingsAnswers[1].status, $('settings-state').textContent, $('setting-iso').value])",
            ], session: session)
            #expect(run.value("document.querySelectorAll('.live-tile').length") as? Int == 2, "the wall shows both cameras")
            let lens = run.json("JSON.stringify([!!$('lens-0-far-1'), document.querySelector('.live-tile[data-camera=B] .lens').hidden, document.querySelectorAll('.live-tile[data-camera=B] .lens button').length])") as? [Any]
            #expect(lens?[0] as? Bool == true && lens?[1] as? Bool == true && lens?[2] as? Int == 0, "A (with a lens) has buttons, B none: \(String(describing: lens))")
            #expect((run.value("$('settings-state').textContent") as? String)?.contains("A iso = 1600") == true, "\(run.output.suffix(1500))")
            let refused = run.json("JSON.stringify([window.settingsAnswers[1].status, $('settings-state').textContent, $('setting-iso').value])") as? [Any]
            #expect(refused?[0] as? Int == 409 && (refused?[1] as? String)?.contains("camera 'B': iso '800' is not offered by PTP/IP Camera; choices: 100, 200, 400") == true,
                    "\(String(describing: refused))")
            let read = try await shutterpipe(["get", "iso", "--socket", socket], in: folder.path, environment: environment)
            #expect(read.lines.map { $0.split(separator: " ").prefix(2).joined(separator: " ") } == ["A.iso 1600", "B.iso 100"], "A kept 1600: a change every camera must take is made on none when one refuses; \(read.stdout) \(read.stderr)")
            let stored = try FileManager.default.contentsOfDirectory(atPath: folder.file("out")).filter { $0.hasSuffix(".jpg") }
            #expect(stored.count == 2, "the capture in the middle stored both cameras' photos: \(stored)")
            session.signal(SIGTERM)
            #expect(await session.wait(timeout: .seconds(30)).status == 0)
        }
    }
}
