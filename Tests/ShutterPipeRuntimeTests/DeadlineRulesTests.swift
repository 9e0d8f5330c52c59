import Foundation
import ShutterPipeKit
import ShutterPipeRuntime
import ShutterPipeSupport
import TestSupport
import Testing

@Suite("Coordinator rules 10, 11 and 13: deadlines, shutdown, a sink that cannot start", .timeLimit(.minutes(2)))
struct DeadlineRulesTests {
    @Test("rule 10: a capture that hangs fails with timeout at its deadline")
    func captureDeadline() async throws {
        var settings = CoordinatorSettings()
        settings.captureTimeout = .milliseconds(200)
        let hang = Gate("a gate never opened during the test")
        defer { hang.open() }
        let backend = ScriptedBackend(ignoresCancellation: true, captureGate: hang)
        let trigger = ScriptedTrigger(events: [.enter, .capture])
        // The gate is never opened while the pipeline runs: that it ends at all (runToEnd
        // throws past its own limit) is the deadline's doing. An outcome, not a timing:
        // "within 60 s" failed at 61.7 s on a loaded machine while the rule held.
        try await runToEnd([trigger], backend: backend, settings: settings)
        #expect(hang.arrivals == 1, "the capture reached the camera and hung there")
        #expect(trigger.answers.last?.state == .photoFailed)
        #expect(trigger.answers.last?.failure?.cause == .timeout)
    }

    @Test("rule 11: shutdown answers everything queued, then stops the backend")
    func shutdownDrains() async throws {
        let gate = Gate("capture gate")
        let backend = ScriptedBackend(captureGate: gate)
        let trigger = ScriptedTrigger([.send(.enter), .send(.capture), .send(.capture), .send(.capture), .holdOpen])
        let status = try await runToEnd([trigger], backend: backend) { coordinator in
            // The shutdown comes while the first shot is held and two wait behind it.
            await gate.waitForArrivals(1)
            coordinator.shutdown()
            gate.open()
        }
        #expect(trigger.answers.map(\.state) == [.enteredPhotoMode, .photoSuccess, .photoSuccess, .photoSuccess])
        #expect(backend.calls.last == .stop)
        #expect(status.photosStored == 3)
    }

    @Test("rule 13: a sink that cannot start stops the session before any event: no trigger starts, the backend is never opened")
    func sinkThatCannotStart() async throws {
        let backend = ScriptedBackend()
        let trigger = ScriptedTrigger(events: [.enter, .capture])
        let status = try await runToEnd([trigger], backend: backend, sinks: [UnstartableSink()])
        #expect(status.startFailures.count == 1 && status.startFailures[0].hasPrefix("sink 's0' could not start: ")
                && status.startFailures[0].contains("no permission: cannot write in folder '/x'"), "\(status.startFailures)")
        #expect(trigger.answers.isEmpty && backend.calls.isEmpty)
    }

    @Test("rule 10: a finish that hangs is cut off at finishTimeout; the answer and the next shot do not wait for it")
    func finishDeadline() async throws {
        var settings = CoordinatorSettings()
        settings.finishTimeout = .milliseconds(200)
        let hang = Gate("a gate never opened during the test")
        defer { hang.open() }
        let backend = ScriptedBackend(ignoresCancellation: true, finishGate: hang)
        let trigger = ScriptedTrigger(events: [.enter, .capture, .capture])
        let log = LogRecorder()
        // The finishes hang at a gate never opened while the pipeline runs: that both shots
        // are answered and the run ends means neither waited for them.
        try await runToEnd([trigger], backend: backend, settings: settings, log: log.logger)
        #expect(hang.arrivals == 2, "both finishes reached the camera and hung there")
        #expect(trigger.answers.map(\.state) == [.enteredPhotoMode, .photoSuccess, .photoSuccess])
        #expect(log.messages.contains { $0.contains("the backend finishing with the photo did not finish within 200 ms") })
    }
}
