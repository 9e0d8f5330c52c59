#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import ShutterPipeKit
import Synchronization

/// The requests sent to one camera worker and not yet answered, each with the worker
/// (its generation) it went to: answers are matched to their callers, a caller that gave
/// up is told at once, and a worker that dies fails only what it was asked.
final class PendingRequests: Sendable {
    /// A reply, the descriptors of its files, and when the reader got it (monotonic ns).
    typealias Answer = (reply: WorkerReply, descriptors: [Int32], arrivedAt: UInt64)
    private typealias Waiter = CheckedContinuation<Answer, any Error>

    private enum Slot {
        /// Sent; nobody waits yet.
        case sent(generation: Int, started: Bool)
        /// Sent, and its caller waits.
        case waiting(generation: Int, started: Bool, Waiter)
        /// Answered before anyone waited.
        case answered(Result<Answer, ShutterError>)
        /// Its caller gave up.
        case abandoned(generation: Int, started: Bool)
    }

    private let slots = Mutex<(next: UInt64, byID: [UInt64: Slot])>((1, [:]))

    /// A new id for a request sent to worker `generation`.
    func register(generation: Int) -> UInt64 {
        slots.withLock { state in
            let id = state.next
            state.next += 1
            state.byID[id] = .sent(generation: generation, started: false)
            return id
        }
    }

    /// A request that never reached a worker: its answer is this failure.
    func fail(_ id: UInt64, with error: ShutterError) {
        deliver(id, .failure(error))
    }

    /// Waits for the answer to `id`; a failed reply is the answer too (the caller looks).
    func wait(for id: UInt64) async throws -> Answer {
        try await withCheckedThrowingContinuation { (continuation: Waiter) in
            let early = slots.withLock { state -> Result<Answer, any Error>? in
                switch state.byID[id] {
                case .sent(let generation, let started)?:
                    state.byID[id] = .waiting(generation: generation, started: started, continuation)
                    return nil
                case .answered(let result)?:
                    state.byID[id] = nil
                    return result.mapError { $0 }
                case .abandoned?, .waiting?, nil:
                    return .failure(CancellationError())
                }
            }
            if let early { continuation.resume(with: early) }
        }
    }

    /// The caller of `id` gives up: it is told at once. Returns whether the worker had
    /// begun the request (then it is stuck inside libgphoto2).
    func abandon(_ id: UInt64) -> Bool {
        let (waiter, started) = slots.withLock { state -> (Waiter?, Bool) in
            switch state.byID[id] {
            case .sent(let generation, let started)?:
                state.byID[id] = .abandoned(generation: generation, started: started)
                return (nil, started)
            case .waiting(let generation, let started, let waiter)?:
                state.byID[id] = .abandoned(generation: generation, started: started)
                return (waiter, started)
            case .answered(let result)?:
                state.byID[id] = nil
                if case .success(let answer) = result { answer.descriptors.forEach { _ = close($0) } }
                return (nil, false)
            case .abandoned?, nil:
                return (nil, false)
            }
        }
        waiter?.resume(throwing: CancellationError())
        return started
    }

    /// The worker began `id`. Returns false when its caller had already given up: the
    /// request runs with nobody to wait for it.
    func markStarted(_ id: UInt64) -> Bool {
        slots.withLock { state in
            switch state.byID[id] {
            case .sent(let generation, _)?: state.byID[id] = .sent(generation: generation, started: true); return true
            case .waiting(let generation, _, let waiter)?: state.byID[id] = .waiting(generation: generation, started: true, waiter); return true
            case .abandoned?: return false
            default: return true
            }
        }
    }

    /// The answer to `id` came.
    func deliver(_ id: UInt64, _ answer: Answer) {
        deliver(id, .success(answer))
    }

    private func deliver(_ id: UInt64, _ result: Result<Answer, ShutterError>) {
        let waiter = slots.withLock { state -> Waiter? in
            switch state.byID[id] {
            case .waiting(_, _, let waiter)?:
                state.byID[id] = nil
                return waiter
            case .sent?:
                state.byID[id] = .answered(result)
                return nil
            case .abandoned?, .answered?, nil:
                state.byID[id] = nil
                if case .success(let answer) = result { answer.descriptors.forEach { _ = close($0) } }  // nobody will take them
                return nil
            }
        }
        waiter?.resume(with: result.mapError { $0 })
    }

    /// Worker `generation` ended: everything it was asked fails with `error`.
    func failAll(sentTo generation: Int, with error: ShutterError) {
        let ids = slots.withLock { state in
            state.byID.compactMap { id, slot -> UInt64? in
                switch slot {
                case .sent(let g, _), .waiting(let g, _, _): return g == generation ? id : nil
                case .abandoned(let g, _):
                    if g == generation { state.byID[id] = nil }
                    return nil
                case .answered: return nil
                }
            }
        }
        ids.forEach { fail($0, with: error) }
    }
}
