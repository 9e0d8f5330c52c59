import Dispatch
import Foundation
import ShutterPipeKit
import Synchronization

/// A thread of its own for blocking work (file I/O with fsync, C library calls), so that
/// it never occupies a thread of Swift's cooperative pool, nor one of Dispatch's shared
/// worker threads, which timers and other plugins need.
///
/// Work items run one at a time in submission order on one dedicated thread, which also
/// serialises access to whatever the work touches (libgphoto2 is not thread-safe, for
/// instance). The thread ends when the queue is released.
public final class BlockingQueue: Sendable {
    private let worker: Worker

    /// Starts the thread; `label` names it in debuggers and `top -H`.
    public init(label: String) {
        worker = Worker()
        let worker = self.worker
        let thread = Thread { worker.loop() }
        thread.name = label
        thread.start()
    }

    deinit {
        worker.stop()
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
                worker.submit {
                    if abandoned.withLock({ $0 }) { continuation.resume(throwing: CancellationError()); return }
                    continuation.resume(with: Result { try work() })
                }
            }
        } onCancel: {
            abandoned.withLock { $0 = true }
        }
    }

    /// Runs `work`, which cannot fail, on the thread.
    public func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            worker.submit { continuation.resume(returning: work()) }
        }
    }
}

private final class Worker: Sendable {
    private let jobs = Mutex<(queue: [@Sendable () -> Void], stopped: Bool)>(([], false))
    private let wake = DispatchSemaphore(value: 0)

    func submit(_ job: @escaping @Sendable () -> Void) {
        jobs.withLock { $0.queue.append(job) }
        wake.signal()
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
