#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeFixtures
import TestSupport
import Testing

/// Fires `count` shots from stdin, one at a time (each waits for its answer), and waits
/// for the catalogue to record them all (its log line).
func shoot(_ session: RunningProcess, _ count: Int, alreadyAnswered: Int = 0) async {
    for shot in 1...count {
        session.send("capture\n")
        await session.waitForOutput(on: .stdout, "answer \(alreadyAnswered + shot)") { $0.split(separator: "\n").count >= alreadyAnswered + shot }
    }
    await session.waitForOutput("\(alreadyAnswered + count) shots recorded") { shotsRecorded(in: $0) >= alreadyAnswered + count }
}

/// The review screen's suites, nested here so that all their tests run one after another
/// (`.serialized` reaches nested suites): each starts a session, shoots and drives a
/// browser; side by side, beside the rest of the suite on two cores, they starved the
/// in-process tests (runs with a load average near 30 failed their 60 s margins).
@Suite(.serialized) struct ReviewSuites {}

/// The page is up, with `count` shots of the catalogue loaded.
func ready(_ count: Int) -> String {
    "wait:document.body.dataset.ready == 'yes' && app.total == \(count) && app.shots.filter((s) => s && s.id).length == \(count)"
}

extension ReviewSuites {
    @Suite("web: the review screen in a real browser", .serialized, .timeLimit(.minutes(6)))
    struct ReviewScreenTests {
        @Test("three shots come in; key 4 on the second in the grid rates it; after a restart the grid still shows 4 stars, and exiftool reads Rating 4 from its sidecar")
        func ratingSurvivesRestart() async throws {
            let folder = TemporaryDirectory("review-rating")
            let (session, port) = try await webSession(folder, width: 1200, height: 800, verbose: true, yielding: true)
            await shoot(session, 3)
            // Real key presses: G for the grid, → to the cell on the right (newest first: index 1), 4.
            let marked = try await browse(port, "/", [
                ready(3), "key:g", "key:ArrowRight", "wait:app.current == 1", "key:4",
                "wait:document.body.dataset.marksPending == '0' && app.shots[1].rating == 4",
                "eval:JSON.stringify(app.shots.map((s) => [s.shotID, s.rating]))",
            ], session: session)
            let ratings = try #require(marked.json("JSON.stringify(app.shots.map((s) => [s.shotID, s.rating]))") as? [[Any]])
            #expect(ratings.map { $0[1] as? Int } == [0, 4, 0], "\(ratings)")
            #expect((ratings[1][0] as? String)?.hasSuffix("#2") == true, "the second shot taken: \(ratings)")
            await session.waitForOutput("shot 2 marked: rating 4")
            session.signal(SIGTERM)
            #expect(await session.wait(timeout: .seconds(30)).status == 0)

            let (again, secondPort) = try await webSession(folder, width: 1200, height: 800, verbose: true, yielding: true)
            let star = "document.querySelector('#grid .cell[data-index=\"1\"] .stars-shown')"
            let reopened = try await browse(secondPort, "/", [
                ready(3), "key:g", "wait:\(star) && \(star).textContent == '★★★★'",
                "eval:JSON.stringify(app.shots.map((s) => s.rating))",
            ], session: again)
            #expect(reopened.json("JSON.stringify(app.shots.map((s) => s.rating))") as? [Int] == [0, 4, 0])
            let sidecar = try #require(folder.names("out").first { $0.contains("0002") && $0.hasSuffix(".xmp") }, "\(folder.names("out"))")
            let rating = try await ExifTool.run(["-s3", "-XMP:Rating", folder.file("out/\(sidecar)")])
            #expect(rating.trimmingCharacters(in: .whitespacesAndNewlines) == "4", "exiftool: \(rating)")
            again.signal(SIGTERM)
            #expect(await again.wait(timeout: .seconds(30)).status == 0)
        }

        @Test("100 %: a click on the loupe shows the photo's own pixels, the screen's crop equal to Pillow's crop of the stored JPEG (upright by its EXIF orientation), the preview hidden; a RAW's tiles match dcraw_emu's full demosaic")
        func fullSizePixels() async throws {
            let folder = TemporaryDirectory("review-100")
            let card = folder.file("card")
            try FileManager.default.createDirectory(atPath: card, withIntermediateDirectories: true)
            // A detailed photo shot with the camera on its side (EXIF orientation 6): 1600×2400 upright.
            let jpeg = try await offThePool { SyntheticJPEG.make(width: 2400, height: 1600, shot: 7, detail: 40) }
            try jpeg.writeTestFile("\(card)/IMG_0001.JPG")
            let tagged = try await runProgram(["exiftool", "-q", "-overwrite_original", "-Orientation#=6", "-ExposureTime=1/125", "-FNumber=5.6", "-ISO=400",
                                               "-FocalLength=85", "-Model=Canon EOS R5", "-LensModel=RF85mm F1.2 L USM", "\(card)/IMG_0001.JPG"])
            try #require(tagged.status == 0, "exiftool: \(tagged.errors)")
            try await makeDNG("\(card)/IMG_0002.DNG", width: 800, height: 600, in: folder)
            // A RAW+JPEG pair, shot third.
            try await makeDNG("\(card)/IMG_0003.DNG", width: 800, height: 600, in: folder)
            try await offThePool { SyntheticJPEG.make(width: 800, height: 600, shot: 3) }.writeTestFile("\(card)/IMG_0003.JPG")
            let (session, port) = try await webSession(folder, web: ", previewSize: 600", card: card, verbose: true, yielding: true)
            await shoot(session, 1)
            let screenshot = folder.file("loupe-100.png")
            let page = try await browse(port, "/", [
                ready(1), "wait:document.body.dataset.shownWidth == '400'", "eval:document.getElementById('exposure').textContent",
                "click:loupe-view",
                "wait:document.body.dataset.zoom == '100 %' && +document.body.dataset.tilesShown > 0 && window.tilePaints.length >= +document.body.dataset.tilesShown",
                "eval:JSON.stringify({origin: document.body.dataset.origin, box: (() => { const r = document.getElementById('loupe-view').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })(), preview: getComputedStyle(document.querySelector('#loupe-view .preview')).visibility, ratio: devicePixelRatio})",
                "screenshot:\(screenshot)",
            ], session: session)
            let exposure = page.value("document.getElementById('exposure').textContent") as? String ?? ""
            for shown in ["1/125 s", "f/5.6", "ISO400", "85 mm", "RF85mm F1.2 L USM", "Canon EOS R5", "web-0001.jpg", "JPEG"] where !exposure.contains(shown) {
                Issue.record("the exposure panel lacks '\(shown)': \(exposure)")
            }
            let view = try #require(page.json("JSON.stringify({origin: document.body.dataset.origin, box: (() => { const r = document.getElementById('loupe-view').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })(), preview: getComputedStyle(document.querySelector('#loupe-view .preview')).visibility, ratio: devicePixelRatio})") as? [String: Any])
            #expect(view["preview"] as? String == "hidden", "never an upscaled preview: \(view)")
            #expect(view["ratio"] as? Double == 1)
            let origin = try #require((view["origin"] as? String)?.split(separator: ",").compactMap { Double($0) })
            let box = try #require(view["box"] as? [Double])
            // A 160×160 square at the centre of the loupe, on the screen and in the photo.
            let screenX = Int(box[0] + box[2] / 2) - 80, screenY = Int(box[1] + box[3] / 2) - 80
            let photoX = screenX - Int(origin[0].rounded()), photoY = screenY - Int(origin[1].rounded())
            #expect(photoX >= 0 && photoY >= 0 && photoX + 160 <= 1600 && photoY + 160 <= 2400, "\(view)")
            let stored = try #require(folder.names("out").first { $0.hasSuffix(".jpg") })
            let difference = try await pillow(["compare", screenshot, String(screenX), String(screenY), folder.file("out/\(stored)"), String(photoX), String(photoY), "160", "160"])
            #expect(difference["max"] as? Int == 0, "the screen at 100 % against Pillow's decode of the stored photo: \(difference)")

            // The RAW: its tiles are LibRaw's full demosaic, as dcraw_emu develops it.
            await shoot(session, 1, alreadyAnswered: 1)
            let image = try #require(try await http("GET", "/api/shots/2/image.json", port: port).json)
            #expect(image["width"] as? Int == 800 && image["height"] as? Int == 600 && image["tileSize"] as? Int == 512, "\(image)")
            let tile = try await http("GET", "/api/shots/2/tiles/1-0.png", port: port)
            try #require(tile.status == 200 && tile.body.starts(with: [0x89, 0x50, 0x4E, 0x47]), "\(tile.status)")
            try tile.body.writeTestFile(folder.file("tile.png"))
            let copy = folder.file("IMG_0002.DNG")
            try copyTestFile("\(card)/IMG_0002.DNG", to: copy)
            let developed = try await runProgram(["dcraw_emu", "-w", copy])
            try #require(developed.status == 0, "dcraw_emu: \(developed.errors)")
            let raw = try await pillow(["compare", folder.file("tile.png"), "0", "0", copy + ".ppm", "512", "0", "288", "512"])
            #expect((raw["mean"] as? Double ?? 99) < 4, "tile 1-0 against dcraw_emu's full demosaic: \(raw)")
            #expect(try await http("GET", "/api/shots/2/tiles/2-0.png", port: port).status == 404, "outside the image")

            // The pair: W switches the 100 % view to its RAW; its tiles come from it.
            await shoot(session, 1, alreadyAnswered: 2)
            let tiles = "JSON.stringify([...document.querySelectorAll('#loupe-view .tiles img')].map((i) => i.src.includes('from=raw')))"
            let pair = try await browse(port, "/", [
                ready(3), "wait:!document.getElementById('raw').hidden && document.body.dataset.shownWidth", "key:w",
                "click:loupe-view", "wait:document.body.dataset.zoom == '100 %' && +document.body.dataset.tilesShown > 0 && window.tilePaints.length >= +document.body.dataset.tilesShown",
                "eval:\(tiles)", "eval:document.querySelector('#loupe-view .caption').textContent",
            ], session: session)
            #expect((pair.json(tiles) as? [Bool]).map { !$0.isEmpty && $0.allSatisfy { $0 } } == true, "\(pair.output)")
            #expect((pair.value("document.querySelector('#loupe-view .caption').textContent") as? String)?.hasSuffix("full size, RAW") == true, "\(pair.output)")
            session.signal(SIGTERM)
            #expect(await session.wait(timeout: .seconds(30)).status == 0)
        }

        @Test("the loupe's histogram has the counts Pillow computes from the same preview (red, green, blue, and luma as Pillow's L)")
        func histogram() async throws {
            let folder = TemporaryDirectory("review-histogram")
            let (session, port) = try await webSession(folder, width: 1200, height: 900, verbose: true, yielding: true)
            await shoot(session, 2)
            let overlay = "(() => { const c = document.querySelector('#loupe-view canvas.clipping'); if (c.hidden) return null; const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let high = 0, low = 0; for (let i = 0; i < d.length; i += 4) { if (d[i + 3] && d[i] == 255) high++; else if (d[i + 3]) low++; } return JSON.stringify({ high, low }); })()"
            let page = try await browse(port, "/", [
                ready(2), "wait:document.body.dataset.histogramFor == '2'", "eval:JSON.stringify(app.histogram)",
                // The clipping overlays, by their keys, at thresholds typed into their fields (the
                // synthetic photos have no deep shadows: 140 marks their darker tenth).
                "eval:document.getElementById('clip-high-at').value = '200'", "eval:document.getElementById('clip-low-at').value = '140'",
                "key:h", "key:s", "eval:\(overlay)",
            ], session: session)
            let shown = try #require(page.json("JSON.stringify(app.histogram)") as? [String: Any])
            let preview = try await http("GET", "/api/shots/2/preview.jpg", port: port)
            try preview.body.writeTestFile(folder.file("preview.jpg"))
            let reference = try await pillow(["histogram", folder.file("preview.jpg")])
            for channel in ["red", "green", "blue", "luma"] {
                let ours = shown[channel] as? [Int], theirs = reference[channel] as? [Int]
                #expect(ours != nil && ours == theirs, "\(channel): ours \(ours?.prefix(8) ?? []) Pillow's \(theirs?.prefix(8) ?? [])")
            }
            #expect((shown["width"] as? Int, shown["height"] as? Int) == (reference["width"] as? Int, reference["height"] as? Int))
            // The overlay counts against Pillow's, on the same preview (the browser decodes it itself: within 0.2 %).
            let clipped = try #require(page.json(overlay) as? [String: Int], "\(page.output)")
            let expected = try await pillow(["clipped", folder.file("preview.jpg"), "200", "140"])
            let pixels = Double((shown["width"] as? Int ?? 1) * (shown["height"] as? Int ?? 1))
            for side in ["high", "low"] {
                let ours = clipped[side] ?? -1, theirs = expected[side] as? Int ?? -1
                #expect(ours > 0 && Double(abs(ours - theirs)) <= pixels * 0.002, "\(side): the overlay marks \(ours) pixels, Pillow counts \(theirs)")
            }
            session.signal(SIGTERM)
            #expect(await session.wait(timeout: .seconds(30)).status == 0)
        }

        @Test("on a phone (390×844, touch) and a desktop (1920×1080): no sideways scrolling, the shutter and the marks in view; screenshots kept as test artefacts")
        func screenshots() async throws {
            let folder = TemporaryDirectory("review-screens")
            let (session, port) = try await webSession(folder, width: 1800, height: 1200, verbose: true, yielding: true)
            await shoot(session, 4)
            let artefacts = try artefactsFolder("review-screen")
            let fits = "document.documentElement.scrollWidth <= innerWidth && document.getElementById('shutter').getBoundingClientRect().bottom <= innerHeight && document.getElementById('marks').getBoundingClientRect().right <= innerWidth + 1"
            // The newest shot rated 3 and labelled red, so that the screenshots show marks.
            _ = try await browse(port, "/", [ready(4), "key:3", "key:6", "wait:document.body.dataset.marksPending == '0'"], session: session)
            for (name, viewport) in [("phone", "390,844,3,1"), ("desktop", "1920,1080,1,0")] {
                let page = try await browse(port, "/", [
                    "viewport:\(viewport)", ready(4),
                    "wait:document.body.dataset.shownWidth && document.body.dataset.histogramFor == '4'", "eval:\(fits)", "screenshot:\(artefacts)/\(name)-loupe.png",
                    "key:g", "wait:document.querySelectorAll('#grid .cell img').length == 4 && [...document.querySelectorAll('#grid .cell img')].every((i) => i.complete)",
                    "eval:\(fits)", "screenshot:\(artefacts)/\(name)-grid.png",
                ], session: session)
                #expect(page.steps.filter { $0["eval"] as? String == fits }.allSatisfy { $0["value"] as? Bool == true }, "\(name): \(page.output)")
                for view in ["loupe", "grid"] {
                    let png = (try? Data(contentsOf: URL(fileURLWithPath: "\(artefacts)/\(name)-\(view).png"))) ?? Data()
                    let width = png.count > 24 ? Int(png[16]) << 24 | Int(png[17]) << 16 | Int(png[18]) << 8 | Int(png[19]) : 0
                    #expect(width == (name == "phone" ? 1170 : 1920), "\(name) \(view): a screenshot \(width) px wide")
                }
            }
            print("review screen screenshots: \(artefacts)")
            session.signal(SIGTERM)
            #expect(await session.wait(timeout: .seconds(30)).status == 0)
        }
    }
}

extension ReviewSuites {
    @Suite("web: compare, pinch and the keys, in a real browser", .serialized, .timeLimit(.minutes(6)))
    struct ReviewCompareTests {
        @Test("R pins the shot as the reference against the newest; a click zooms both panes to 100 % together; a shot from the shutter button replaces the newest; ? lists the keys; on a phone a pinch zooms the loupe")
        func compareAndPinch() async throws {
            let folder = TemporaryDirectory("review-compare")
            let (session, port) = try await webSession(folder, width: 2000, height: 1500, verbose: true, yielding: true)
            await shoot(session, 3)
            let panes = "JSON.stringify(compare.viewers.map((v) => [v.shot.shotID.split('#')[1], v.caption.textContent.includes('100 %'), v.element.classList.contains('reference')]))"
            let page = try await browse(port, "/", [
                ready(3), "key:ArrowLeft", "wait:app.current == 1", "key:r",
                "wait:app.view == 'compare' && compare.viewers.length == 2 && compare.viewers.every((v) => v.preview.complete && v.preview.naturalWidth)",
                "eval:\(panes)",
                "click:compare-0",
                "wait:compare.viewers.every((v) => v.caption.textContent.includes('100 %'))", "eval:\(panes)",
                "click:shutter", "wait:compare.viewers.length == 2 && compare.viewers[1].shot.id == 4 && compare.viewers.every((v) => v.caption.textContent.startsWith('shot ' + v.shot.id + ' · 100 %'))", "eval:\(panes)",
                "key:?", "eval:document.getElementById('help-dialog').open",
            ], session: session)
            let shown = page.steps.filter { $0["eval"] as? String == panes }.compactMap { ($0["value"] as? String).flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [[Any]] } }
            try #require(shown.count == 3, "\(page.output)")
            #expect(shown[0].map { $0[0] as? String } == ["2", "3"] && shown[0].map { $0[2] as? Bool } == [true, false], "the reference, then the newest: \(shown[0])")
            #expect(shown[1].allSatisfy { $0[1] as? Bool == true }, "zoomed together: \(shown[1])")
            #expect(shown[2].map { $0[0] as? String } == ["2", "4"] && shown[2].allSatisfy { $0[1] as? Bool == true }, "the new shot replaces the newest, at the same zoom: \(shown[2])")
            #expect(page.value("document.getElementById('help-dialog').open") as? Bool == true)
            let phone = try await browse(port, "/", ["viewport:390,844,3,1", ready(4), "wait:document.body.dataset.shownWidth", "pinch:loupe-view",
                                                     "wait:document.body.dataset.zoom && document.body.dataset.zoom != 'fit'", "eval:document.body.dataset.zoom"], session: session)
            #expect((phone.value("document.body.dataset.zoom") as? String)?.hasSuffix("%") == true, "\(phone.output)")
            session.signal(SIGTERM)
            #expect(await session.wait(timeout: .seconds(30)).status == 0)
        }
    }
}
