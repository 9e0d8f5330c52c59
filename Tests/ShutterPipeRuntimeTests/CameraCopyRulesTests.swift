import Foundation
import ShutterPipeKit
import ShutterPipeRuntime
import ShutterPipeSupport
import TestSupport
import Testing

/// Rule 12 of the coordinator: when the camera's copy of a shot is deleted (the backend's
/// `finish`), and when it stays on the card.
@Suite("Coordinator rule 12: the camera's copy", .timeLimit(.minutes(2)))
struct CameraCopyRulesTests {
    @Test("rule 12: deleting the camera's copy never delays the answer; the next shot's store and the exit still wait for it")
    func finishAfterAnswer() async throws {
        let timeline = Timeline()
        let backend = GatedFinishBackend(timeline: timeline)
        let trigger = ScriptedTrigger([.send(.capture), .awaitAnswers(1), .send(.capture), .awaitAnswers(2)])
        let run = Task { try await runToEnd([trigger], backend: backend, sinks: [RecordingSink(timeline: timeline)]) }
        // The first finish is held: the answer comes all the same.
        #expect(await eventually { trigger.answers.count == 1 }, "the answer waited for the backend's finish")
        #expect(await eventually { backend.events.contains("finish 1 began") })
        #expect(!backend.events.contains("finish 1 ended"))
        // The second shot is taken meanwhile, but not stored until the first finish ended:
        // the timeline shows the order, whatever the timing.
        #expect(await eventually { backend.events.count == 3 })
        backend.releaseFinish()
        _ = try await run.value
        #expect(trigger.answers.map(\.state) == [.photoSuccess, .photoSuccess])
        #expect(backend.events == ["capture 1", "finish 1 began", "capture 2", "finish 1 ended", "finish 2 began", "finish 2 ended", "stop"])
        #expect(try #require(timeline.index(of: "finish 1 ended")) < (try #require(timeline.index(of: "store 2 began"))),
                "the next shot was stored while the last one's finish ran: \(timeline.all)")
    }

    @Test("rule 12: with only processing sinks (a hook, a manifest) every shot stays on the camera")
    func processingSinksKeepShotsOnCard() async throws {
        let backend = ScriptedBackend()
        let hook = RecordingSink("hook", role: .processing)
        let trigger = ScriptedTrigger(events: [.capture, .capture, .capture])
        let log = LogRecorder()
        let status = try await runToEnd([trigger], backend: backend, sinks: [hook], log: log.logger)
        #expect(trigger.answers.map(\.state) == [.photoSuccess, .photoSuccess, .photoSuccess])
        #expect(backend.calls.filter { $0 == .finish(stored: false) }.count == 3)
        #expect(!backend.calls.contains(.finish(stored: true)))
        #expect(status.photosStored == 3)
        #expect(log.messages.contains { $0.contains("no sink in this pipeline keeps the photos (s0): every shot stays on the camera's card") })
    }

    @Test("rule 12: RAW+JPEG is archived only when every archival sink stored both files")
    func everyFileOfTheShot() async throws {
        let backend = ScriptedBackend(files: ["JPG", "CR2"])
        let archive = RecordingSink("archive"), forgetful = ForgetfulSink()
        let trigger = ScriptedTrigger(events: [.capture, .capture])
        try await runToEnd([trigger], backend: backend, sinks: [archive, forgetful])
        #expect(trigger.answers.map(\.state) == [.photoFailed, .photoFailed])
        #expect(trigger.answers.first?.failure?.cause == .unexpected)
        #expect(trigger.answers.first?.failure?.message == "sink 's1' keeps photos but did not report storing IMG_1.CR2")
        #expect(backend.calls.filter { $0 == .finish(stored: false) }.count == 2)
        #expect(!backend.calls.contains(.finish(stored: true)))
        // The same shots with a sink that keeps both files are archived.
        let whole = ScriptedBackend(files: ["JPG", "CR2"])
        let second = ScriptedTrigger(events: [.capture, .capture])
        try await runToEnd([second], backend: whole, sinks: [RecordingSink("archive")])
        #expect(second.answers.map(\.state) == [.photoSuccess, .photoSuccess])
        #expect(second.answers.first?.stored.map(\.cameraFile) == ["IMG_1.JPG", "IMG_1.CR2"])
        #expect(whole.calls.filter { $0 == .finish(stored: true) }.count == 2)
    }
}
