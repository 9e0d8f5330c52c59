import Dispatch
import Foundation
import ShutterPipeKit
import Synchronization

/// A thread of its own for blocking work (file I/O with fsync, C library calls), so that
/// it never occupies a thread of Swift's cooperative pool, nor one of Dispatch's shared
/// worker threads, which timers and other plugins need.
///
/// Work items run one at a time in submission order on one dedicated thread (an
/// ``OwnedThread``), which also serialises access to whatever the work touches
/// (libgphoto2 is not thread-safe, for instance). Each may have a deadline
/// (``run(deadline:_:)``). The thread ends after the last item once the queue is closed
/// (``close()``) or released.
public final class BlockingQueue: Sendable {
    private let worker: Worker

    /// How the thread competes for the CPU with the rest of the session.
    public enum Priority: Sendable {
        /// Like every other thread.
        case normal
        /// Throughput work that can wait a few milliseconds for latency-bound work: a
        /// sink storing the last photo while a rig's cameras are fired for the next one.
        /// The thread runs 10 nice levels below the process (Linux keeps a nice value per
        /// thread): it still gets every idle cycle, but a woken camera worker or trigger
        /// thread takes the CPU from it at once. Programs it starts inherit it.
        case background
    }

    /// Lowers the calling thread's priority by `levels` nice levels (at most to 19). On
    /// Linux, PRIO_PROCESS with 0 is the calling thread, not the whole process.
    static func lowerThreadPriority(by levels: Int32) {
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        errno = 0
        let current = getpriority(which, 0)
        guard errno == 0 else { return }
        _ = setpriority(which, 0, min(19, current + levels))
    }

    /// Starts the thread; `label` names it in debuggers and `top -H`.
    public init(label: String, priority: Priority = .normal) {
        worker = Worker()
        let worker = self.worker
        OwnedThread.start(label, priority: priority) { worker.loop() }
    }

    deinit {
        worker.stop()
    }

    /// Takes no more work: what is queued runs, then the thread ends. Work submitted after
    /// is refused with `CancellationError`.
    public func close() {
        worker.stop()
    }

    /// Runs `work` on the thread, as ``run(_:)-(()->T)`` does, and throws a `timeout`
    /// ``ShutterError`` naming `what` when it has not finished within `deadline` (from
    /// now: time waiting behind other work counts). The work itself is not interrupted: a
    /// blocking call ends when its resource does; put the resource's own timeouts inside.
    public func run<T: Sendable>(deadline: Duration, _ what: String, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withDeadline(deadline, what) { try await self.run(work) }
    }

    /// Runs `work` on the thread and returns its result. If the calling task is cancelled
    /// before `work` starts (a deadline passed while it waited behind other work), `work`
    /// is skipped and this throws `CancellationError`: abandoned work never piles up
    /// behind a slow call. Once started, `work` runs to its end; cancellation does not
    /// interrupt it, so put deadlines inside it where the C API allows.
    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        let abandoned = Mutex(false)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let queued = worker.submit {
                    if abandoned.withLock({ $0 }) { continuation.resume(throwing: CancellationError()); return }
                    continuation.resume(with: Result { try work() })
                }
                if !queued { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            abandoned.withLock { $0 = true }
        }
    }

    /// Runs `work`, which cannot fail, on the thread (after ``close()``, on one of its own).
    public func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let queued = worker.submit { continuation.resume(returning: work()) }
            // Closed: it runs anyway, on a thread of its own, since it cannot be refused.
            if !queued { OwnedThread.start("shutterpipe late work") { continuation.resume(returning: work()) } }
        }
    }
}

private final class Worker: Sendable {
    private let jobs = Mutex<(queue: [@Sendable () -> Void], stopped: Bool)>(([], false))
    private let wake = DispatchSemaphore(value: 0)

    /// Queues `job`; false (the job dropped) once stopped.
    @discardableResult
    func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        guard jobs.withLock({ state -> Bool in
            guard !state.stopped else { return false }
            state.queue.append(job)
            return true
        }) else { return false }
        wake.signal()
        return true
    }

    func stop() {
        jobs.withLock { $0.stopped = true }
        wake.signal()
    }

    func loop() {
        while true {
            wake.wait()
            let next = jobs.withLock { state -> (@Sendable () -> Void)? in
                state.queue.isEmpty ? nil : state.queue.removeFirst()
            }
            if let next { next(); continue }
            if jobs.withLock({ $0.stopped && $0.queue.isEmpty }) { return }
        }
    }
}
