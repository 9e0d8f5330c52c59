import Dispatch
import Foundation
import Synchronization

/// Runs plugin code on an executor the kit owns and measures how long each piece of it
/// held the thread, so a plugin call that blocks (a read, an fsync, a C call, a sleep
/// that is not `Task.sleep`) where the cooperative pool would run it is caught.
///
/// The plugin's code runs with a task executor preference for one thread of the kit's
/// (SE-0417): its synchronous stretches, those of default actors it calls included, run
/// there, while work it hands to threads of its own (a `BlockingQueue`) runs elsewhere
/// and is not counted. The longest stretch is the answer: in the pool it would have held
/// one of only as many threads as the machine has cores.
final class PoolWatch: TaskExecutor, @unchecked Sendable {  // jobs handed over under `lock`
    /// Stretches longer than this are reported. Short ones have innocent causes on a
    /// loaded machine (a descheduled thread, the loader's lock while libraries load).
    static let limit: Duration = .seconds(2)

    private let lock = NSLock()
    private var jobs: [UnownedJob] = []
    private let wake = DispatchSemaphore(value: 0)
    private let longest = Mutex<Duration>(.zero)

    init() {
        let thread = Thread { [self] in
            while true {
                wake.wait()
                lock.lock()
                let job = jobs.removeFirst()
                lock.unlock()
                let started = ContinuousClock.now
                job.runSynchronously(on: asUnownedTaskExecutor())
                let held = ContinuousClock.now - started
                longest.withLock { $0 = max($0, held) }
            }
        }
        thread.name = "shutterpipe conformance watch"
        thread.start()
    }

    func enqueue(_ job: UnownedJob) {
        lock.lock()
        jobs.append(job)
        lock.unlock()
        wake.signal()
    }

    /// Runs `work` on the watched thread; returns its result and the longest time any
    /// synchronous stretch of it held the thread.
    func run<T: Sendable>(_ work: @Sendable () async throws -> T) async throws -> (T, Duration) {
        longest.withLock { $0 = .zero }
        let result = try await withTaskExecutorPreference(self) { try await work() }
        return (result, longest.withLock { $0 })
    }
}
