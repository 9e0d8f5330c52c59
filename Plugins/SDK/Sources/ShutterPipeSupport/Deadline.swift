import Dispatch
import ShutterPipeKit
import Synchronization

/// Runs `operation` with a deadline. When the deadline passes first, the operation's task
/// is cancelled and this throws ``FailureCause/timeout`` at once, without waiting for an
/// operation that ignores cancellation: a caller under a deadline never hangs.
///
/// - Parameter what: names the operation in the timeout message ("capture").
public func withDeadline<T: Sendable>(
    _ limit: Duration, _ what: String,
    operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await runAbandoningOnCancel(operation, deadline: (limit, what))
}

/// Runs `operation` until it returns, or until the calling task is cancelled: then this
/// throws `CancellationError` at once and abandons the operation, whose own task is
/// cancelled and left to finish by itself.
///
/// For work that cannot be interrupted, such as a C call on a ``BlockingQueue``: the
/// caller stops waiting for it, and what the work returns later is dropped.
public func abandoningOnCancel<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await runAbandoningOnCancel(operation, deadline: nil)
}

private func runAbandoningOnCancel<T: Sendable>(
    _ operation: @escaping @Sendable () async throws -> T, deadline: (limit: Duration, what: String)?
) async throws -> T {
    let gate = ResumeGate<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            gate.arm(continuation)
            let work = Task {
                do { gate.resume(with: .success(try await operation())) } catch { gate.resume(with: .failure(error)) }
            }
            // A Dispatch timer, not a sleeping task: a cancelled Task.sleep still holds its
            // scheduled job until the deadline would have passed, so thousands of quick
            // operations under a 60 s deadline held megabytes for a minute (found by the
            // long-session case). A cancelled Dispatch source is released at once.
            let timer = deadline.map { limit, what in
                DeadlineTimer(after: limit) {
                    if gate.resume(with: .failure(ShutterError(.timeout, "\(what) did not finish within \(formatDuration(limit))"))) {
                        work.cancel()
                    }
                }
            }
            gate.onResume { timer?.cancel(); work.cancel() }
        }
    } onCancel: {
        gate.resume(with: .failure(CancellationError()))
    }
}

/// Waits until `start` calls back, or `limit` has passed; true when it called back in time.
/// For work that says its end through a callback and goes on past the wait (a write left
/// to finish in its turn, a catalogue still opening): nothing is cancelled, and no thread
/// is blocked. The one wait of its kind: `withDeadline` is for async work that can be
/// cancelled.
public func waitForCallback(within limit: Duration, _ start: (@escaping @Sendable () -> Void) -> Void) async -> Bool {
    await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        let resumed = Mutex(false)
        let resume: @Sendable (Bool) -> Void = { inTime in
            guard !resumed.withLock({ done in defer { done = true }; return done }) else { return }
            continuation.resume(returning: inTime)
        }
        start { resume(true) }
        DispatchQueue.global().asyncAfter(deadline: limit.fromNow) { resume(false) }
    }
}

/// Waits `duration` whether or not the calling task is cancelled: for a stop that must
/// still give what it drains its time. A cancelled `Task.sleep` throws at once, so a
/// polling loop around `try? await Task.sleep` in a cancelled task spins a thread of the
/// cooperative pool until its own deadline (or for good, without one).
public func pauseIgnoringCancellation(for duration: Duration) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        DispatchQueue.global().asyncAfter(deadline: duration.fromNow) { continuation.resume() }
    }
}

/// A one-shot Dispatch timer (Dispatch sources are thread-safe; cancel releases it at once).
private final class DeadlineTimer: @unchecked Sendable {
    private let source: any DispatchSourceTimer

    init(after limit: Duration, _ fire: @escaping @Sendable () -> Void) {
        source = DispatchSource.makeTimerSource(queue: .global())
        source.schedule(deadline: min(max(limit, .zero), .seconds(315_360_000)).fromNow)  // ten years at most
        source.setEventHandler(handler: fire)
        source.resume()
    }

    func cancel() { source.cancel() }
}

/// Resumes a continuation exactly once, whoever comes first.
private final class ResumeGate<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var pending: Result<T, any Error>?
        var done = false
        var cleanup: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())

    func arm(_ continuation: CheckedContinuation<T, any Error>) {
        let early = state.withLock { state -> Result<T, any Error>? in
            if let pending = state.pending { state.pending = nil; return pending }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    func onResume(_ cleanup: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            if state.done { return true }
            state.cleanup = cleanup
            return false
        }
        if runNow { cleanup() }
    }

    /// Returns true if this call was the one that resumed.
    @discardableResult
    func resume(with result: Result<T, any Error>) -> Bool {
        let (continuation, cleanup, won) = state.withLock { state -> (CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?, Bool) in
            if state.done { return (nil, nil, false) }
            state.done = true
            let continuation = state.continuation
            state.continuation = nil
            if continuation == nil { state.pending = result }
            let cleanup = state.cleanup
            state.cleanup = nil
            return (continuation, cleanup, true)
        }
        continuation?.resume(with: result)
        cleanup?()
        return won
    }
}

/// Runs `work` as a task and blocks the calling thread until it ends, at most `timeout`: a
/// timeout or a throw is a failure (the work, if still running, is cancelled and left to
/// end by itself). The one place a thread that is not the cooperative pool's (an HTTP
/// connection's, a camera's, a digest queue's) waits for async work; never call it from
/// a task, whose thread it would hold.
public func waitForAsyncWork<T: Sendable>(timeout: Duration, _ work: @escaping @Sendable () async throws -> T) -> Result<T, ShutterError> {
    let result = Mutex<Result<T, ShutterError>?>(nil)
    let done = DispatchSemaphore(value: 0)
    let task = Task {
        let outcome: Result<T, ShutterError>
        do { outcome = .success(try await work()) } catch { outcome = .failure(ShutterError.wrapping(error)) }
        result.withLock { $0 = outcome }
        done.signal()
    }
    if done.wait(timeout: timeout.fromNow) == .timedOut { task.cancel() }
    return result.withLock { $0 } ?? .failure(ShutterError(.timeout, "no answer within \(formatDuration(timeout))", fix: "try again; see the log"))
}
