import Foundation
import ShutterPipeKit
import ShutterPipeRuntime
import ShutterPipeSupport
import TestSupport
import Testing

@Suite("Coordinator status and failure states", .timeLimit(.minutes(2)))
struct CoordinatorStatusTests {
    @Test("status counts are derived from the answers delivered: each success, failure and refusal once")
    func countsFromAnswers() async throws {
        var settings = CoordinatorSettings()
        settings.queueLimit = 1
        let gate = Gate("capture gate")
        let backend = ScriptedBackend(captureFailures: [2: ShutterError(.cameraFailure, "jammed")], captureGate: gate)
        // Capture 1 held, capture 2 waits, 3 and 4 are refused; then the rest go through.
        let trigger = ScriptedTrigger([.send(.enter), .awaitAnswers(1), .send(.capture), .awaitArrivals(gate, 1),
                                       .send(.capture), .send(.capture), .send(.capture), .awaitAnswers(3), .open(gate),
                                       .awaitAnswers(5), .send(.capture)])
        let status = try await runToEnd([trigger], backend: backend, settings: settings)
        let answers = trigger.answers
        #expect(status.eventsAnswered == answers.count)
        #expect(status.photosStored == answers.filter { $0.state == .photoSuccess }.count)
        #expect(status.photosFailed == answers.filter { $0.state == .photoFailed }.count)
        #expect(status.eventsRefused == answers.filter { $0.failure?.cause == .busy }.count)
        #expect(status.eventsRefused == 2 && status.photosFailed == 3 && status.photosStored == 2)
    }

    @Test("a trigger that fails to start is reported in the status")
    func triggerSetupFailure() async throws {
        let broken = ScriptedTrigger([.fail(ShutterError(.permissionDenied, "cannot open /dev/input/event3"))])
        let status = try await runToEnd([broken], backend: ScriptedBackend())
        #expect(status.triggerFailures.count == 1)
        #expect(status.triggerFailures[0].contains("/dev/input/event3"))
    }

    @Test("every failure maps to the state the remote-shutter rule gives it")
    func causeToState() {
        for cause in FailureCause.allCases {
            #expect(cause.state(answering: .capture) == .photoFailed)
            #expect(cause.state(answering: .enter) == .exitedOrUnableToEnter)
        }
    }
}
