#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeFixtures
import ShutterPipeKit
import TestSupport
import Synchronization
import Testing
@testable import WebTrigger

@Suite("web previews", .timeLimit(.minutes(2)))
struct PreviewTests {
    // A 2000×1500 photo decodes at 6/8 to 1500×1125; a 1920×1280 embedded preview at 6/8
    // to 1440×960: the size tells which one was the source. (Small and plain, so that
    // making and decoding them holds no pool thread for long: the suite runs in parallel.)
    static let photo = SyntheticJPEG.make(width: 2000, height: 1500, shot: 1)

    /// The photo, made (once) on a thread of its own: a debug build takes a while to make
    /// it, which on the cooperative pool would starve the tests running beside this one.
    static func madePhoto() async throws -> Data { try await offThePool { photo } }

    @Test("the embedded large preview (MPF) is the source when it is at least the preview's size; a small one, or another picture (a stereo pair's second eye), is not")
    func embedded() async throws {
        try await offThePool { try checkEmbedded(Self.photo) }
    }

    private func checkEmbedded(_ photo: Data) throws {
        let large = MultiPictureJPEG.make(primary: photo, secondary: SyntheticJPEG.make(width: 1920, height: 1280, shot: 2))
        #expect(dimensions(try PreviewMaker.scaled(large, longEdge: 1600)) == [1440, 960])
        let small = MultiPictureJPEG.make(primary: photo, secondary: SyntheticJPEG.make(width: 640, height: 480, shot: 2))
        #expect(dimensions(try PreviewMaker.scaled(small, longEdge: 1600)) == [1500, 1125])
        let stereo = MultiPictureJPEG.make(primary: photo, secondary: SyntheticJPEG.make(width: 1920, height: 1280, shot: 2), kind: .disparity)
        #expect(dimensions(try PreviewMaker.scaled(stereo, longEdge: 1600)) == [1500, 1125])
        #expect(dimensions(try PreviewMaker.scaled(photo, longEdge: 1600)) == [1500, 1125])
        // A damaged index (its entry pointing past the end) falls back to the photo.
        var damaged = large
        damaged.removeLast(1000)
        #expect(dimensions(try PreviewMaker.scaled(damaged, longEdge: 1600)) == [1500, 1125])
    }

    @Test("through a session: a camera JPEG with an embedded preview is previewed from it")
    func embeddedInSession() async throws {
        let folder = TemporaryDirectory("web-embedded")
        try FileManager.default.createDirectory(atPath: folder.file("card"), withIntermediateDirectories: true)
        let large = try await offThePool { MultiPictureJPEG.make(primary: Self.photo, secondary: SyntheticJPEG.make(width: 1920, height: 1280, shot: 2)) }
        try large.writeTestFile(folder.file("card/DSC00001.JPG"))
        let config = try writeConfig("""
        version: 1
        session: web
        backend: {type: file-stub, directory: \(folder.file("card"))}
        triggers:
          - type: stdin
          - {type: web, listen: "127.0.0.1:0"}
        sinks: [{type: files, directory: \(folder.file("out"))}]
        """, in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path)
        let port = try #require(await webPort(session))
        session.send("capture\n")
        #expect(await eventually(timeout: .seconds(60)) { session.stdoutSoFar.contains("photoSuccess") }, "\(session.stderrSoFar)")
        // The stdin trigger prints its answer before the web trigger, an observer, records it.
        #expect(await eventually { ((try? await http("GET", "/api/photos", port: port))?.json?["photos"] as? [Any])?.isEmpty == false })
        let preview = try await http("GET", "/api/photos/latest/preview.jpg", port: port)
        #expect(preview.status == 200 && dimensions(preview.body) == [1440, 960], "\(preview.status) \(String(decoding: preview.body.prefix(300), as: UTF8.self))")
        session.signal(SIGTERM)
        #expect(await session.wait(timeout: .seconds(30)).status == 0)
    }

    @Test("while a page listens, a stored photo's preview is made before anyone asks (and not while none does); a request while it is made waits for it, and nothing is decoded twice")
    func preparedAhead() async throws {
        let folder = TemporaryDirectory("web-prepare")
        let photo = try await Self.madePhoto()
        let unseen = folder.file("unseen.jpg"), path = folder.file("shot.jpg")
        try photo.writeTestFile(unseen)
        try photo.writeTestFile(path)
        let trigger = WebTrigger(options: WebOptions())
        func answer(_ location: String, _ shot: Int) -> ShutterAnswer {
            ShutterAnswer(request: TriggerEvent(.capture), state: .photoSuccess, stored: [StoredFile(location: location, byteCount: photo.count)], shot: ShotID(run: "test", number: shot))
        }
        // With no page open, nothing is made: once the next shot's preview (made while a
        // page listens) is ready, the earlier one, stored before it, was never made.
        await trigger.observe(answer(unseen, 1), trigger: "stdin")
        // With one listening on /events, it is made before anyone asks.
        let page = trigger.hub.listen()
        await trigger.observe(answer(path, 2), trigger: "stdin")
        #expect(await eventually { trigger.previews.isCached(path) })
        #expect(!trigger.previews.isCached(unseen))
        let previews = await onThreads(8) { _ in (try? trigger.previews.preview(of: path)) ?? Data() }
        #expect(Set(previews).count == 1 && dimensions(previews[0]) == [1500, 1125])
        #expect(trigger.previews.madeCount == 1)
        withExtendedLifetime(page) {}
        // Eight connections asking at once for a preview not yet made: one decode.
        let maker = PreviewMaker(longEdge: 1600)
        let together = await onThreads(8) { _ in (try? maker.preview(of: path)) ?? Data() }
        #expect(Set(together).count == 1 && dimensions(together[0]) == [1500, 1125])
        #expect(maker.madeCount == 1)
    }
}

/// A JPEG's width and height, as an array (tuples are not Equatable).
func dimensions(_ data: Data) -> [Int] {
    jpegSize(data).map { [$0.0, $0.1] } ?? []
}

extension PreviewTests {
    @Test("a preview the backend made (the camera worker's, decoded as the bytes came) after its shot was stored is that stored photo's preview: nothing is decoded from the file, and a request waiting for a decode gets it; a camera's small thumbnail is not taken")
    func backendPreviewAfterStored() async throws {
        let folder = TemporaryDirectory("backend-preview")
        let photo = try await Self.madePhoto()
        let worker = try await offThePool { SyntheticJPEG.make(width: 1500, height: 1125, shot: 9) }
        let thumbnail = try await offThePool { SyntheticJPEG.make(width: 160, height: 120, shot: 9) }
        try await offThePool {
            // Shot 1: stored (no preview from its bytes was made), then the worker's comes.
            let path = folder.file("IMG_0001.jpg")
            try photo.writeTestFile(path)
            let maker = PreviewMaker(longEdge: 1600)
            #expect(!maker.adoptEarly(shot: 1, as: path))
            maker.offerSharp(thumbnail, shot: 1)
            #expect(!maker.isCached(path), "a thumbnail is no preview")
            maker.offerSharp(worker, shot: 1)
            #expect(try maker.preview(of: path) == worker)
            #expect(maker.madeCount == 0, "decoded from the file")
            // Shot 2: the worker's preview comes before the file is stored: the file adopts it.
            let second = folder.file("IMG_0002.jpg")
            try photo.writeTestFile(second)
            maker.offerSharp(worker, shot: 2)
            #expect(maker.adoptEarly(shot: 2, as: second))
            #expect(try maker.preview(of: second) == worker && maker.madeCount == 0)
        }
    }
}

extension PreviewTests {
    @Test("a backend that says a photo's preview follows (CapturedFile.previewFollows): its bytes wait for that preview and are not decoded, and the stored file's requests get it; one that never sends it has its bytes decoded once the wait is over")
    func backendPreviewPromised() async throws {
        let folder = TemporaryDirectory("backend-preview-promised")
        let photo = try await Self.madePhoto()
        let worker = try await offThePool { SyntheticJPEG.make(width: 1500, height: 1125, shot: 9) }
        let maker = PreviewMaker(longEdge: 1600)
        let made = Mutex<[Data]>([])
        // Shot 1: promised; the file is stored before the backend's preview comes.
        maker.prepareEarly(photo, shot: 1, waitingFirst: .seconds(60)) { preview in made.withLock { $0.append(preview) } }
        let path = folder.file("IMG_0001.jpg")
        try photo.writeTestFile(path)
        #expect(maker.adoptEarly(shot: 1, as: path), "the stored file waits for the promised preview")
        maker.offerSharp(worker, shot: 1)
        #expect(try await offThePool { try maker.preview(of: path) } == worker)
        #expect(await eventually { made.withLock { $0.count } == 1 })
        #expect(made.withLock { $0.first } == worker, "the page is told of the backend's preview")
        // Shot 2: promised, never sent: the bytes are decoded once the wait is over.
        maker.prepareEarly(photo, shot: 2, waitingFirst: .milliseconds(100)) { preview in made.withLock { $0.append(preview) } }
        #expect(await eventually { made.withLock { $0.count } == 2 })
        let decoded = try #require(made.withLock { $0.last })
        #expect(decoded != worker && (dimensions(decoded).max() ?? 0) >= 1000, "a preview of the bytes: \(dimensions(decoded))")
        #expect(maker.madeCount == 0, "nothing decoded from a stored file")
    }
}
