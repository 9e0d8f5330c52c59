import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// How answers leave the coordinator: in the order of their events (rule 2), refusals at
/// once (rule 3), and every one through `deliver` (rules 1 and 10).
extension ShutterCoordinator {
    /// Delivers an answer after the photo being stored has been answered, so answers keep
    /// the order of their events (rule 2).
    func answerInOrder(_ answer: ShutterAnswer, to trigger: NamedTrigger, started: ContinuousClock.Instant) async {
        await settlePendingStore()
        var answer = answer
        answer.duration = ContinuousClock.now - started
        await deliver(answer, to: trigger)
    }

    /// Answers a refusal at once (rule 3).
    func answer(_ refusal: Refusal) async {
        let request: TriggerEvent, trigger: Int
        switch refusal {
        case .settings(let settingsRequest, let trigger, let reply):
            return refuse(settingsRequest, from: trigger, answer: reply)
        case .label(let labelRequest, _, let reply):
            return reply(LabelAnswer(request: labelRequest, label: label, failure: ShutterError(
                .busy, "\(settings.queueLimit) events are already waiting; the label was not set",
                fix: "wait for the answers, or raise coordinator.queueLimit")))
        case .sequence(let sequenceRequest, _, let reply):
            return reply(SequenceAnswer(request: sequenceRequest, failure: ShutterError(
                .busy, "\(settings.queueLimit) events are already waiting; the sequence was not run",
                fix: "wait for the answers, or raise coordinator.queueLimit")))
        case .event(let event, let index):
            (request, trigger) = (event, index)
        }
        let event = request.event
        let failure: ShutterError? = event == .unknown ? nil : ShutterError(
            .busy, "\(settings.queueLimit) events are already waiting",
            fix: "wait for the answers, or raise coordinator.queueLimit")
        let answer = ShutterAnswer(request: request, state: event == .capture ? .photoFailed : currentModeState, failure: failure)
        await deliver(answer, to: triggers[trigger], refused: true)
    }

    /// The one way an answer leaves the coordinator: counted, logged, handed to its
    /// trigger (its event's ``PendingAnswer``, then `sync`) under a deadline (none for a shot from the camera's own button, `trigger`
    /// `nil`), shown to the sinks and the observers, then the status is published.
    func deliver(_ answer: ShutterAnswer, to trigger: NamedTrigger?, refused: Bool = false) async {
        status.record(answer, refused: refused, fromCamera: trigger == nil)
        countForShotList(answer)
        if let trigger {
            answerLog.answered(answer, by: trigger.name)
            let source = trigger.source
            do {
                try await withDeadline(settings.syncTimeout, "trigger '\(trigger.name)' taking the answer") {
                    await answer.deliver(to: source)
                }
            } catch {
                log.warning("\(ShutterError.wrapping(error))")
            }
        } else {
            answerLog.cameraShot(answer)
        }
        for named in chain.sinks { await named.sink.observe(answer) }
        for sessionObserver in sessionObservers { await sessionObserver.observe(answer, trigger: trigger?.name ?? "camera") }
        observer?(status)
    }
}
