import Foundation
import ShutterPipeKit
import ShutterPipeRuntime
import ShutterPipeSupport
import Synchronization
import TestSupport
import Testing

/// A backend whose captures report download progress, and let a test look at the
/// tracker while they do.
final class ProgressBackend: CaptureBackend {
    let look: @Sendable (String) -> Void
    private let context = Mutex<BackendContext?>(nil)
    private let captures = Mutex(0)

    init(look: @escaping @Sendable (String) -> Void) { self.look = look }

    var cameraName: String { "progress" }

    func prepare(_ context: BackendContext) async throws {
        self.context.withLock { $0 = context }
        context.report(DownloadProgress(file: "STRAY.JPG", bytes: 1, total: 2))  // no capture runs: dropped
        look("prepare")
    }

    func capture() async throws -> CapturedPhoto {
        let number = captures.withLock { $0 += 1; return $0 }
        let context = self.context.withLock { $0 }
        look("capture \(number) began")
        context?.report(DownloadProgress(file: "IMG_\(number).CR2", bytes: 12_000_000, total: 24_000_000))
        context?.report(DownloadProgress(file: "IMG_\(number).JPG", bytes: 0, total: 8_000_000))
        look("capture \(number) downloading")
        return CapturedPhoto(files: [CapturedFile(name: "IMG_\(number).JPG", data: Data("photo".utf8))], camera: "progress")
    }

    func stop() async {}
}

@Suite("the shots in flight, as the coordinator tracks them", .timeLimit(.minutes(1)))
struct ShotTrackerTests {
    @Test("capturing, then downloading with the backend's bytes summed over its files, storing while the sinks work, then gone; in a burst the next shot downloads while one stores; reports outside a capture are dropped")
    func phases() async throws {
        let tracker = ShotTracker()
        let seen = Mutex<[String: [ShotTracker.Shot]]>([:])
        let backend = ProgressBackend { moment in seen.withLock { $0[moment] = tracker.shots } }
        // Store 1 is held until shot 2 has reported its download: a store outlasts the next
        // capture, for certain.
        let stores = Gate("store gate")
        let sink = RecordingSink(gate: stores)
        let trigger = ScriptedTrigger(events: [.enter, .capture, .capture, .exit])
        let coordinator = ShutterCoordinator(backend: backend, triggers: [NamedTrigger(name: "t", source: trigger)],
                                             sinks: [NamedSink(name: "s", sink: sink)], session: "test", log: .discarding, tracker: tracker)
        async let ran = withDeadline(.seconds(60), "the pipeline") { await coordinator.run() }
        await stores.waitForArrivals(1)
        #expect(await eventually { seen.withLock { $0["capture 2 downloading"] } != nil })
        stores.open()
        _ = try await ran
        let snapshots = seen.withLock { $0 }
        #expect(snapshots["prepare"]?.isEmpty == true)
        let began = try #require(snapshots["capture 1 began"]?.first)
        #expect(began.number == 1 && began.phase == .capturing)
        let downloading = try #require(snapshots["capture 1 downloading"]?.first)
        #expect(downloading.phase == .downloading && downloading.bytes == 12_000_000 && downloading.total == 32_000_000 && downloading.files == 2)
        // Shot 2 downloads while shot 1 is stored; its bytes are its own.
        let burst = try #require(snapshots["capture 2 downloading"])
        #expect(burst.map(\.number) == [1, 2] && burst.map(\.phase) == [.storing, .downloading], "\(burst)")
        #expect(burst[1].bytes == 12_000_000 && burst[1].files == 2)
        #expect(tracker.shots.isEmpty)
        #expect(trigger.answers.map(\.state) == [.enteredPhotoMode, .photoSuccess, .photoSuccess, .exitedOrUnableToEnter])
    }
}

/// A backend whose captures report their file's download (IMG_0001.JPG, IMG_0002.JPG …), the
/// second held at a gate, and that shows a picture of a file when the test says so (a
/// preview decoded as the bytes came, after the answer).
final class LatePreviewBackend: CaptureBackend {
    private let context = Mutex<BackendContext?>(nil)
    private let captures = Mutex(0)
    let second = Gate("second capture")
    var cameraName: String { "late" }
    func prepare(_ context: BackendContext) async throws { self.context.withLock { $0 = context } }
    func capture() async throws -> CapturedPhoto {
        let number = captures.withLock { $0 += 1; return $0 }
        if number == 2 { try await second.pass() }
        let name = String(format: "IMG_%04d.JPG", number)
        context.withLock { $0 }?.report(DownloadProgress(file: name, bytes: 5, total: 5))
        return CapturedPhoto(files: [CapturedFile(name: name, data: Data("photo".utf8))], camera: "late")
    }
    func show(_ file: String) { context.withLock { $0 }?.show(EarlyPreview(file: file, jpeg: Data([0xFF, 0xD8, 0xFF, 0xD9]), source: "preview")) }
    func stop() async {}
}

/// A display: it hears the session's early pictures, and ends at once as a trigger.
final class PreviewWatcher: TriggerSource, SessionObserver {
    let previewed = Mutex<[(file: String, shot: Int)]>([])
    func run(delivering events: EventChannel) async throws {}
    func observe(_ answer: ShutterAnswer, trigger: String) async {}
    func previewed(_ preview: EarlyPreview, shot: Int) async { previewed.withLock { $0.append((preview.file, shot)) } }
}

extension ShotTrackerTests {
    @Test("a picture the backend shows after the shot was answered (a preview decoded as the bytes came) still reaches the displays, with that shot's number, though the next shot is being captured; one of a file no shot downloaded goes to the shot being captured")
    func previewAfterTheAnswer() async throws {
        let backend = LatePreviewBackend()
        let watcher = PreviewWatcher()
        let trigger = ScriptedTrigger([.send(.enter), .send(.capture), .awaitAnswers(2), .send(.capture), .holdOpen])
        let tracker = ShotTracker()
        let coordinator = ShutterCoordinator(backend: backend, triggers: [NamedTrigger(name: "t", source: trigger), NamedTrigger(name: "page", source: watcher)],
                                             sinks: [NamedSink(name: "s", sink: RecordingSink())], session: "test", log: .discarding, tracker: tracker)
        let run = Task { await coordinator.run() }
        // Shot 1 answered; shot 2 held in its capture.
        await backend.second.waitForArrivals(1)
        #expect(trigger.answers.map(\.state) == [.enteredPhotoMode, .photoSuccess] && tracker.shots.map(\.number) == [2])
        backend.show("IMG_0001.JPG")
        #expect(await eventually { watcher.previewed.withLock { $0.count } == 1 })
        backend.show("OTHER.JPG")
        #expect(await eventually { watcher.previewed.withLock { $0.count } == 2 })
        backend.second.open()
        #expect(await eventually { trigger.answers.count == 3 })
        coordinator.shutdown()
        _ = await run.value
        let heard = watcher.previewed.withLock { $0 }
        #expect(heard.map(\.file) == ["IMG_0001.JPG", "OTHER.JPG"] && heard.map(\.shot) == [1, 2], "\(heard)")
    }
}
