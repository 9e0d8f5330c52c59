import Foundation
import ShutterPipeKit
import ShutterPipeRuntime
import ShutterPipeSupport
import TestSupport
import Testing

/// Runs a coordinator to the end under a deadline, so a broken rule fails instead of
/// hanging the suite.
@discardableResult
func runToEnd(_ triggers: [ScriptedTrigger], backend: any CaptureBackend, sinks: [any PhotoSink] = [RecordingSink()],
              settings: CoordinatorSettings = CoordinatorSettings(), log: Logger = .discarding,
              afterStart: (@Sendable (ShutterCoordinator) async -> Void)? = nil) async throws -> CoordinatorStatus {
    let coordinator = ShutterCoordinator(
        backend: backend,
        triggers: triggers.enumerated().map { NamedTrigger(name: "t\($0.offset)", source: $0.element) },
        sinks: sinks.enumerated().map { NamedSink(name: "s\($0.offset)", sink: $0.element) },
        session: "test", settings: settings, log: log)
    // Generous: at the start of a full run on 2 cores the pool can be starved for seconds.
    async let status = withDeadline(.seconds(60), "the pipeline") { await coordinator.run() }
    if let afterStart { await afterStart(coordinator) }
    return try await status
}

@Suite("Coordinator rules", .timeLimit(.minutes(2)))
struct CoordinatorTests {
    @Test("rule 1: exactly one answer per event, sent to the trigger that sent it")
    func oneAnswerPerEvent() async throws {
        let first = ScriptedTrigger(events: [.enter, .capture, .unknown, .capture, .exit])
        let second = ScriptedTrigger(events: [.capture, .capture])
        try await runToEnd([first, second], backend: ScriptedBackend())
        #expect(first.answers.map(\.request.token) == [1, 2, 3, 4, 5])
        #expect(second.answers.map(\.request.token) == [1, 2])
        #expect(first.answers.map(\.request.event) == [.enter, .capture, .unknown, .capture, .exit])
    }

    @Test("rule 2: events are handled one at a time, in arrival order")
    func oneAtATime() async throws {
        let backend = ScriptedBackend(captureDelay: .milliseconds(20))
        let trigger = ScriptedTrigger(events: [.enter] + Array(repeating: .capture, count: 5))
        try await runToEnd([trigger], backend: backend)
        #expect(backend.maximumConcurrentCaptures == 1)
        #expect(!backend.lifecycleOverlapped)
        #expect(trigger.answers.compactMap(\.shotNumber) == [1, 2, 3, 4, 5])
        #expect(trigger.answers.allSatisfy { $0.state != .photoFailed })
    }

    @Test("rule 2: in a burst, the next capture runs while the sinks store a photo; one store at a time, answers in order")
    func burstOverlap() async throws {
        let probe = OverlapProbe()
        let captures = Gate("capture gate")
        let backend = ScriptedBackend(probe: probe, captureGate: captures)
        let stores = Gate("store gate")
        let sink = RecordingSink(probe: probe, gate: stores)
        let trigger = ScriptedTrigger(events: [.enter] + Array(repeating: .capture, count: 6) + [.exit])
        // Capture N+1 is let through only once store N has reached the sink, and store N
        // is held until capture N+1 has ended: captures 2 to 6 surely run while one is
        // stored, however late the machine schedules the store's task.
        try await runToEnd([trigger], backend: backend, sinks: [sink]) { _ in
            captures.release()
            for shot in 1...6 {
                await stores.waitForArrivals(shot)
                if shot < 6 {
                    captures.release()
                    #expect(await eventually { probe.capturesEnded == shot + 1 }, "capture \(shot + 1) ran while store \(shot) was held")
                }
                stores.release()
            }
        }
        #expect(probe.capturesDuringStores == 5)
        #expect(sink.maximumConcurrentStores == 1)
        #expect(backend.maximumConcurrentCaptures == 1)
        #expect(!backend.lifecycleOverlapped)
        #expect(trigger.answers.map(\.request.token) == Array(1...8))
        #expect(trigger.answers.compactMap(\.shotNumber) == Array(1...6))
        #expect(trigger.answers.last?.state == .exitedOrUnableToEnter)
        // The exit waited for the last store: the backend stopped after every finish.
        let calls = backend.calls
        #expect(calls.lastIndex(of: .finish(stored: true))! < calls.lastIndex(of: .stop)!)
        #expect(calls.filter { $0 == .finish(stored: true) }.count == 6)
    }

    @Test("rule 3: beyond the queue bound, captures and enters are refused as busy; exits never")
    func boundedQueue() async throws {
        var settings = CoordinatorSettings()
        settings.queueLimit = 2
        let gate = Gate("capture gate")
        let backend = ScriptedBackend(captureGate: gate)
        // The first capture is held in the backend; two wait; the rest are refused at once.
        let trigger = ScriptedTrigger([.send(.enter), .awaitAnswers(1), .send(.capture), .awaitArrivals(gate, 1)]
                                      + Array(repeating: .send(.capture), count: 5) + [.send(.enter), .awaitAnswers(5), .open(gate), .send(.exit)])
        let status = try await runToEnd([trigger], backend: backend, settings: settings)
        let captures = trigger.answers.filter { $0.request.event == .capture }
        #expect(captures.count == 6)
        #expect(captures.filter { $0.state == .photoSuccess }.count == 3)
        let busy = trigger.answers.filter { $0.failure?.cause == .busy }
        #expect(busy.count == 4)  // three captures and the enter
        #expect(busy.filter { $0.request.event == .capture }.allSatisfy { $0.state == .photoFailed })
        #expect(busy.first { $0.request.event == .enter }?.state == .enteredPhotoMode)  // still in photo mode
        #expect(trigger.answers.last?.request.event == .exit)
        #expect(trigger.answers.last?.state == .exitedOrUnableToEnter)
        #expect(status.eventsRefused == 4)
        #expect(trigger.answers.count == 9)
    }

    @Test("rule 4: enter prepares once and answers enteredPhotoMode")
    func enterPreparesOnce() async throws {
        let backend = ScriptedBackend()
        let trigger = ScriptedTrigger(events: [.enter, .enter])
        let status = try await runToEnd([trigger], backend: backend)
        #expect(trigger.answers.map(\.state) == [.enteredPhotoMode, .enteredPhotoMode])
        #expect(backend.calls.filter { $0 == .prepare }.count == 1)
        #expect(backend.calls.last == .stop)  // shutdown leaves photo mode
        #expect(!status.inPhotoMode)
    }

    @Test("rule 4: a failed enter answers exitedOrUnableToEnter with its cause")
    func enterFails() async throws {
        let backend = ScriptedBackend(prepareFailure: ShutterError(.noCamera, "no camera on USB"))
        let trigger = ScriptedTrigger(events: [.enter])
        try await runToEnd([trigger], backend: backend)
        #expect(trigger.answers.map(\.state) == [.exitedOrUnableToEnter])
        #expect(trigger.answers.first?.failure?.cause == .noCamera)
        #expect(trigger.answers.first?.failure?.message == "no camera on USB")
    }

    @Test("rule 5: photoSuccess only after every sink stored the photo; the backend learns it")
    func captureStoresEverywhere() async throws {
        let backend = ScriptedBackend()
        let slow = RecordingSink("slow", delay: .milliseconds(50)), fast = RecordingSink("fast")
        let trigger = ScriptedTrigger(events: [.enter, .capture])
        try await runToEnd([trigger], backend: backend, sinks: [slow, fast])
        let answer = try #require(trigger.answers.last)
        #expect(answer.state == .photoSuccess)
        #expect(answer.stored.map(\.location) == ["slow/1", "fast/1"])
        #expect(slow.photos.count == 1 && fast.photos.count == 1)
        #expect(slow.contexts.first?.trigger == "t0")
        #expect(slow.contexts.first?.session == "test")
        #expect(backend.calls == [.prepare, .capture, .finish(stored: true), .stop])
    }

    @Test("rule 5: a failing sink makes photoFailed with its cause, and the photo stays on the camera")
    func sinkFailure() async throws {
        let backend = ScriptedBackend()
        let full = RecordingSink("full", failure: ShutterError(.storageUnavailable, "disk full"))
        let good = RecordingSink("good")
        let trigger = ScriptedTrigger(events: [.capture])
        let status = try await runToEnd([trigger], backend: backend, sinks: [full, good])
        let answer = try #require(trigger.answers.first)
        #expect(answer.state == .photoFailed)
        #expect(answer.failure?.cause == .storageUnavailable)
        #expect(good.photos.count == 1)  // the other sinks still get it
        #expect(backend.calls.contains(.finish(stored: false)))
        #expect(!backend.calls.contains(.finish(stored: true)))
        #expect(status.photosFailed == 1 && status.photosStored == 0)
    }

    @Test("rule 5: several cameras, one of which failed: the others' files are stored, and the answer is photoFailed naming the camera")
    func partOfTheRigFailed() async throws {
        let backend = ScriptedBackend(files: ["JPG", "CR2"],
                                      partial: [2: ShutterError(.cameraFailure, "camera 'left' went away during capture")])
        let sink = RecordingSink("archive")
        let trigger = ScriptedTrigger(events: [.capture, .capture, .capture])
        let status = try await runToEnd([trigger], backend: backend, sinks: [sink])
        #expect(trigger.answers.map(\.state) == [.photoSuccess, .photoFailed, .photoSuccess])
        let failed = trigger.answers[1]
        #expect(failed.failure?.cause == .cameraFailure && failed.failure?.message == "camera 'left' went away during capture")
        #expect(failed.stored.map(\.cameraFile) == ["IMG_2.JPG"])  // what came is stored all the same
        #expect(sink.photos.map(\.files.count) == [2, 1, 2])
        #expect(backend.calls.filter { $0 == .finish(stored: true) }.count == 3)  // what came is archived: its card copy may go
        #expect(status.photosFailed == 1 && status.photosStored == 2)
    }

    @Test("rule 5: a camera failure answers photoFailed with the camera's cause")
    func cameraFailure() async throws {
        let backend = ScriptedBackend(captureFailures: [2: ShutterError(.storageUnavailable, "card full")])
        let trigger = ScriptedTrigger(events: [.enter, .capture, .capture, .capture])
        try await runToEnd([trigger], backend: backend)
        #expect(trigger.answers.map(\.state) == [.enteredPhotoMode, .photoSuccess, .photoFailed, .photoSuccess])
        #expect(trigger.answers[2].failure?.cause == .storageUnavailable)
        #expect(trigger.answers[2].failure?.message == "card full")
    }

    @Test("rule 6: a capture outside photo mode enters first by default")
    func autoEnter() async throws {
        let backend = ScriptedBackend()
        let trigger = ScriptedTrigger(events: [.capture])
        try await runToEnd([trigger], backend: backend)
        #expect(trigger.answers.map(\.state) == [.photoSuccess])
        #expect(backend.calls.prefix(2) == [.prepare, .capture])
    }

    @Test("rule 6: with autoEnter off, a capture outside photo mode fails with notInPhotoMode")
    func autoEnterOff() async throws {
        var settings = CoordinatorSettings()
        settings.autoEnter = false
        let backend = ScriptedBackend()
        let trigger = ScriptedTrigger(events: [.capture, .enter, .capture])
        try await runToEnd([trigger], backend: backend, settings: settings)
        #expect(trigger.answers.map(\.state) == [.photoFailed, .enteredPhotoMode, .photoSuccess])
        #expect(trigger.answers[0].failure?.cause == .notInPhotoMode)
        #expect(backend.calls.first == .prepare)  // nothing reached the camera before enter
    }

    @Test("rule 6: when entering fails, the capture answers photoFailed with that cause")
    func autoEnterFails() async throws {
        let backend = ScriptedBackend(prepareFailure: ShutterError(.permissionDenied, "claimed by gvfs"))
        let trigger = ScriptedTrigger(events: [.capture])
        try await runToEnd([trigger], backend: backend)
        #expect(trigger.answers.first?.state == .photoFailed)
        #expect(trigger.answers.first?.failure?.cause == .permissionDenied)
        #expect(!backend.calls.contains(.capture))
    }

    @Test("rule 7: exit comes after what was queued before it, then stops the backend")
    func exitFinishesInFlight() async throws {
        let backend = ScriptedBackend(captureDelay: .milliseconds(30))
        let trigger = ScriptedTrigger(events: [.enter, .capture, .capture, .exit, .capture])
        try await runToEnd([trigger], backend: backend)
        #expect(trigger.answers.map(\.state) == [.enteredPhotoMode, .photoSuccess, .photoSuccess, .exitedOrUnableToEnter, .photoSuccess])
        #expect(trigger.answers[3].failure == nil)
        let calls = backend.calls
        // Both shots finished before the exit stopped the backend; the last capture entered again.
        let stop = try #require(calls.firstIndex(of: .stop))
        #expect(calls[..<stop].filter { $0 == .finish(stored: true) }.count == 2)
        #expect(calls[..<stop].filter { $0 == .capture }.count == 2)
        #expect(calls[stop...].prefix(3) == [.stop, .prepare, .capture])
    }

    @Test("rule 8: unknown changes nothing and answers the current mode")
    func unknownIsIgnored() async throws {
        let backend = ScriptedBackend()
        let trigger = ScriptedTrigger(events: [.unknown, .enter, .unknown])
        let log = LogRecorder()
        try await runToEnd([trigger], backend: backend, log: log.logger)
        #expect(trigger.answers.map(\.state) == [.exitedOrUnableToEnter, .enteredPhotoMode, .enteredPhotoMode])
        #expect(trigger.answers.allSatisfy { $0.failure == nil })
        #expect(backend.calls == [.prepare, .stop])
        #expect(log.messages.contains { $0.contains("unknown command") })
    }

    @Test("rule 9: photos the camera took itself go to the sinks, and every sink observes their outcome like any shot's")
    func cameraButtonShots() async throws {
        let backend = ScriptedBackend()
        let sink = RecordingSink()
        let trigger = ScriptedTrigger([.send(.enter), .awaitAnswers(1), .holdOpen])
        let status = try await runToEnd([trigger], backend: backend, sinks: [sink]) { coordinator in
            _ = await eventually { trigger.answers.count == 1 }
            backend.pressCameraButton(7)
            backend.pressCameraButton(8)
            _ = await eventually { sink.photos.count == 2 }
            coordinator.shutdown()
        }
        #expect(sink.photos.map { $0.files[0].name } == ["BUTTON_7.JPG", "BUTTON_8.JPG"])
        #expect(sink.contexts.map(\.trigger) == ["camera", "camera"])
        #expect(backend.calls.filter { $0 == .finish(stored: true) }.count == 2)
        #expect(status.photosStored == 2)
        #expect(trigger.answers.count == 1)  // no event, no answer
        // The same path as a remote shot's from there: every sink observes the outcome.
        let observed = sink.observed.filter { $0.request.origin == "camera button" }
        #expect(observed.map(\.state) == [.photoSuccess, .photoSuccess] && observed.compactMap(\.shotNumber) == [1, 2], "\(sink.observed)")
    }
}

@Suite("coordinator: the end of a session")
struct SessionEndTests {
    @Test("a camera shot delivered while photo mode is left at the end of input is stored, finished and answered before the run returns (its store is not cut off)")
    func shotDeliveredWhileLeaving() async throws {
        let backend = ScriptedBackend(deliversOnStop: 9)
        // A slow store: without waiting for it, the run would return first.
        let sink = RecordingSink(delay: .milliseconds(300))
        let trigger = ScriptedTrigger([.send(.enter), .awaitAnswers(1)])
        let status = try await runToEnd([trigger], backend: backend, sinks: [sink])
        #expect(sink.photos.map { $0.files[0].name } == ["BUTTON_9.JPG"])
        #expect(status.photosStored == 1)
        #expect(backend.calls.contains(.finish(stored: true)), "\(backend.calls)")
    }
}

/// A sink whose destination cannot work.
final class UnstartableSink: PhotoSink {
    func begin() async throws { throw ShutterError(.storageUnavailable, "no permission: cannot write in folder '/x'", fix: "choose another") }
    func store(_ photo: CapturedPhoto, context: ShotContext) async throws -> SinkReceipt { SinkReceipt(files: []) }
}
