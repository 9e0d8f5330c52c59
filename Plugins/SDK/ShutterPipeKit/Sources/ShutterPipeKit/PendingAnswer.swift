import Synchronization

/// The answer owed for one event a trigger submitted (``EventChannel/submit(_:)``):
/// await it (``answer()``) or observe it (``observe(_:)``). The coordinator resolves it,
/// once, when it has the answering state: at the moment it syncs the same answer to the
/// trigger through ``TriggerSource/sync(_:)``. So a trigger that talks to many clients (a
/// socket, a broker, a web page) keeps no map of its own from requests to answers: each
/// request's handle carries its answer back. (Added in contract 9.1.)
public final class PendingAnswer: Sendable, Equatable {
    private enum State {
        case waiting([UInt64: @Sendable (ShutterAnswer) -> Void], next: UInt64)
        case answered(ShutterAnswer)
    }
    private let state = Mutex<State>(.waiting([:], next: 0))

    /// The event it answers.
    public let request: TriggerEvent

    init(request: TriggerEvent) {
        self.request = request
    }

    public static func == (a: PendingAnswer, b: PendingAnswer) -> Bool { a === b }

    /// The answer, if it came.
    public var current: ShutterAnswer? {
        state.withLock { if case .answered(let answer) = $0 { return answer } else { return nil } }
    }

    /// Calls `handler` once with the answer: at once if it came, else when it comes, on
    /// the coordinator's task (return quickly, as from ``TriggerSource/sync(_:)``).
    public func observe(_ handler: @escaping @Sendable (ShutterAnswer) -> Void) {
        _ = add(handler)
    }

    /// Waits for the answer. Throws `CancellationError` when the waiting task is cancelled
    /// (the answer still comes to observers and to ``TriggerSource/sync(_:)``).
    public func answer() async throws -> ShutterAnswer {
        let waiter = Waiter()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ShutterAnswer, any Error>) in
                waiter.continuation.withLock { $0 = continuation }
                let key = add { answer in waiter.continuation.withLock { $0.take() }?.resume(returning: answer) }
                waiter.key.withLock { $0 = key }
                if Task.isCancelled { cancel(waiter) }
            }
        } onCancel: {
            cancel(waiter)
        }
    }

    /// One task waiting in ``answer()``.
    private final class Waiter: Sendable {
        let continuation = Mutex<CheckedContinuation<ShutterAnswer, any Error>?>(nil)
        let key = Mutex<UInt64?>(nil)
    }

    private func cancel(_ waiter: Waiter) {
        if let key = waiter.key.withLock({ $0 }) {
            state.withLock { if case .waiting(var handlers, let next) = $0 { handlers[key] = nil; $0 = .waiting(handlers, next: next) } }
        }
        waiter.continuation.withLock { $0.take() }?.resume(throwing: CancellationError())
    }

    /// Adds a handler; returns its key, or `nil` when it was called at once.
    private func add(_ handler: @escaping @Sendable (ShutterAnswer) -> Void) -> UInt64? {
        let outcome = state.withLock { state -> (UInt64?, ShutterAnswer?) in
            switch state {
            case .answered(let answer): return (nil, answer)
            case .waiting(var handlers, let next):
                handlers[next] = handler
                state = .waiting(handlers, next: next + 1)
                return (next, nil)
            }
        }
        if let answer = outcome.1 { handler(answer) }
        return outcome.0
    }

    /// Hands the answer to every observer and waiter; later calls do nothing. The
    /// coordinator calls it (``ShutterAnswer/deliver(to:)``); a trigger never needs to.
    public func resolve(_ answer: ShutterAnswer) {
        let handlers = state.withLock { state -> [@Sendable (ShutterAnswer) -> Void] in
            guard case .waiting(let handlers, _) = state else { return [] }
            state = .answered(answer)
            return handlers.sorted { $0.key < $1.key }.map(\.value)
        }
        for handler in handlers { handler(answer) }
    }
}

extension ShutterAnswer {
    /// How an answer reaches the trigger that sent its event: the event's
    /// ``PendingAnswer`` is resolved, then the trigger's ``TriggerSource/sync(_:)`` runs.
    /// The coordinator's one way of answering; a test that plays the coordinator uses it
    /// too. (Added in contract 9.1.)
    public func deliver(to trigger: any TriggerSource) async {
        request.pendingAnswer?.resolve(self)
        await trigger.sync(self)
    }
}
