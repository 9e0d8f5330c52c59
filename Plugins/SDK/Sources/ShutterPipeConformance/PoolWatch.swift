import Dispatch
import Foundation
import ShutterPipeSupport
import Synchronization

/// Runs plugin code on an executor the kit owns and measures how long each piece of it
/// held the thread, so a plugin call that blocks (a read, an fsync, a C call, a sleep
/// that is not `Task.sleep`) where the cooperative pool would run it is caught.
///
/// The plugin's code runs with a task executor preference for one thread of the kit's
/// (SE-0417): its synchronous stretches, those of default actors it calls included, run
/// there, while work it hands to threads of its own (a `BlockingQueue`) runs elsewhere
/// and is not counted. The longest stretch is the answer: in the pool it would have held
/// one of only as many threads as the machine has cores. A stretch that blocked counts
/// with its wall-clock length; one that only computed, with its CPU time (so a starved
/// machine's preemptions do not count against a plugin).
final class PoolWatch: TaskExecutor, @unchecked Sendable {  // jobs handed over under `lock`
    /// Stretches longer than this are reported. Short ones have innocent causes on a
    /// loaded machine (a descheduled thread, the loader's lock while libraries load).
    static let limit: Duration = .seconds(2)

    private let lock = NSLock()
    private var jobs: [UnownedJob] = []
    private let wake = DispatchSemaphore(value: 0)
    private let longest = Mutex<Duration>(.zero)
    /// Jobs enqueued whose stretch is not yet measured.
    private let unmeasured = Mutex(0)

    init() {
        OwnedThread.start("shutterpipe conformance watch") { [self] in
            while true {
                wake.wait()
                lock.lock()
                let job = jobs.removeFirst()
                lock.unlock()
                let started = ContinuousClock.now, before = ThreadUsage.current()
                job.runSynchronously(on: asUnownedTaskExecutor())
                let after = ThreadUsage.current()
                // A stretch that blocked (slept, waited for I/O or a lock) held the thread
                // for its whole length. One that only computed held it for its CPU time: on
                // a loaded machine its wall-clock length includes preemptions, which are
                // not the plugin's doing and would fail a plugin that conforms.
                let blocked = after.voluntarySwitches > before.voluntarySwitches
                let held = blocked ? ContinuousClock.now - started : after.cpu - before.cpu
                longest.withLock { $0 = max($0, held) }
                unmeasured.withLock { $0 -= 1 }
            }
        }
    }

    func enqueue(_ job: UnownedJob) {
        unmeasured.withLock { $0 += 1 }
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
        // The call's last stretch may still be finishing on the watched thread (its end
        // resumed this code elsewhere): wait until it is measured, or it would count
        // against the next call.
        let settled = ContinuousClock.now + .seconds(10)
        while unmeasured.withLock({ $0 }) > 0 && ContinuousClock.now < settled { try? await Task.sleep(for: .milliseconds(1)) }
        return (result, longest.withLock { $0 })
    }
}
