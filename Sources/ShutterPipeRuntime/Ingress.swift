import ShutterPipeKit
import Synchronization

/// What enters the coordinator, in arrival order.
enum Submission: Sendable {
    /// An event from the trigger at this index.
    case event(TriggerEvent, trigger: Int)
    /// A settings request from the trigger at this index, with who takes its answer.
    case settings(SettingsRequest, trigger: Int, answer: @Sendable (SettingsAnswer) -> Void)
    /// A session label from the trigger at this index, with who takes its answer.
    case label(LabelRequest, trigger: Int, answer: @Sendable (LabelAnswer) -> Void)
    /// A sequence to run, from the trigger at this index, with who takes its answer.
    case sequence(SequenceRequest, trigger: Int, answer: @Sendable (SequenceAnswer) -> Void)
    /// A photo taken with the camera's own button, or delivered by a companion backend (a
    /// hot folder): `backend` 0 is the capturing backend, 1… the companions.
    case cameraShot(CapturedPhoto, backend: Int)
    /// Every trigger has ended.
    case endOfInput

    /// Whether it may be handled while a photo is being stored: only a capture may (rule 2).
    var overlapsPendingStore: Bool {
        if case .event(let request, _) = self { return request.event == .capture }
        return false
    }
}

/// What was refused because the queue was full (rule 3), answered at once.
enum Refusal: Sendable {
    case event(TriggerEvent, trigger: Int)
    case settings(SettingsRequest, trigger: Int, answer: @Sendable (SettingsAnswer) -> Void)
    case label(LabelRequest, trigger: Int, answer: @Sendable (LabelAnswer) -> Void)
    case sequence(SequenceRequest, trigger: Int, answer: @Sendable (SequenceAnswer) -> Void)
}

/// Where events enter the coordinator from any thread: counts what waits, refuses past
/// the bound, keeps arrival order.
final class Ingress: Sendable {
    private let ordered: AsyncStream<Submission>.Continuation
    private let refused: AsyncStream<Refusal>.Continuation
    private let limit: Int
    private let state = Mutex<(waiting: Int, closed: Bool)>((0, false))
    /// While a sequence runs: what cancelled it, once an `exit` arrived (it is answered
    /// in its turn all the same, after the sequence).
    private let sequence = Mutex<(running: Bool, cancelledBy: String?)>((false, nil))

    init(ordered: AsyncStream<Submission>.Continuation, refused: AsyncStream<Refusal>.Continuation, limit: Int) {
        self.ordered = ordered
        self.refused = refused
        self.limit = limit
    }

    /// What became of a submitted event; its description ends the debug log's line.
    enum Admission: Equatable, CustomStringConvertible {
        /// Queued, with this many waiting now (itself included).
        case queued(waiting: Int)
        /// Refused: the queue is full (answered busy at once).
        case refused
        /// The session has ended: nobody takes it.
        case closed

        var description: String {
            switch self {
            case .queued(let waiting): return "\(waiting) waiting"
            case .refused: return "refused, the queue is full"
            case .closed: return "dropped, the session has ended"
            }
        }
    }

    @discardableResult
    func submit(_ request: TriggerEvent, from trigger: Int, name: String = "") -> Admission {
        if request.event == .exit {
            sequence.withLock { sequence in
                if sequence.running && sequence.cancelledBy == nil { sequence.cancelledBy = "exit from \(name.isEmpty ? "a trigger" : name)" }
            }
        }
        return state.withLock { state in
            guard !state.closed else { return .closed }
            if request.event != .exit && state.waiting >= limit {
                refused.yield(.event(request, trigger: trigger))
                return .refused
            }
            state.waiting += 1
            ordered.yield(.event(request, trigger: trigger))
            return .queued(waiting: state.waiting)
        }
    }

    /// A settings request waits in the same queue as events and counts against its bound.
    func submit(_ request: SettingsRequest, from trigger: Int, answer: @escaping @Sendable (SettingsAnswer) -> Void) {
        let accepted = submitRequest(.settings(request, trigger: trigger, answer: answer), or: .settings(request, trigger: trigger, answer: answer))
        // After the session ended nobody would answer it: say so at once (rule 1's spirit).
        if !accepted {
            answer(SettingsAnswer(request: request, failure: ShutterError(.busy, "the session is stopping; the settings were not changed")))
        }
    }

    /// A label waits in the same queue as events and counts against its bound.
    func submit(_ request: LabelRequest, from trigger: Int, answer: @escaping @Sendable (LabelAnswer) -> Void) {
        let accepted = submitRequest(.label(request, trigger: trigger, answer: answer), or: .label(request, trigger: trigger, answer: answer))
        if !accepted { answer(LabelAnswer(request: request, failure: ShutterError(.busy, "the session is stopping; the label was not set"))) }
    }

    /// A sequence waits in the same queue as events and counts against its bound.
    func submit(_ request: SequenceRequest, from trigger: Int, answer: @escaping @Sendable (SequenceAnswer) -> Void) {
        let accepted = submitRequest(.sequence(request, trigger: trigger, answer: answer), or: .sequence(request, trigger: trigger, answer: answer))
        if !accepted { answer(SequenceAnswer(request: request, failure: ShutterError(.busy, "the session is stopping; the sequence was not run"))) }
    }

    /// A sequence starts: an `exit` from now on cancels it.
    func sequenceStarted() {
        sequence.withLock { $0 = (true, nil) }
    }

    /// What cancelled the running sequence, if anything did.
    var sequenceCancelledBy: String? {
        sequence.withLock { $0.cancelledBy }
    }

    /// The sequence has ended.
    func sequenceEnded() {
        sequence.withLock { $0 = (false, nil) }
    }

    /// Queues a request answered through a function, or refuses it past the bound; false
    /// once the session has ended.
    private func submitRequest(_ submission: Submission, or refusal: Refusal) -> Bool {
        state.withLock { state -> Bool in
            guard !state.closed else { return false }
            if state.waiting >= limit {
                refused.yield(refusal)
            } else {
                state.waiting += 1
                ordered.yield(submission)
            }
            return true
        }
    }

    func submitCameraShot(_ photo: CapturedPhoto, from backend: Int = 0) {
        state.withLock { state in
            guard !state.closed else { return }
            ordered.yield(.cameraShot(photo, backend: backend))
        }
    }

    func submitEndOfInput() {
        state.withLock { state in
            guard !state.closed else { return }
            ordered.yield(.endOfInput)
        }
    }

    func dequeued() {
        state.withLock { $0.waiting -= 1 }
    }

    func close() {
        state.withLock { state in
            state.closed = true
            ordered.finish()
        }
    }
}
