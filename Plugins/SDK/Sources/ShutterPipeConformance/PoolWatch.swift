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
final class PoolWatch: TaskExecutor, @unchecked Sendable {  // its state is the queue's, under its lock
    /// Stretches longer than this are reported. Short ones have innocent causes on a
    /// loaded machine (a descheduled thread, the loader's lock while libraries load).
    static let limit: Duration = .seconds(2)

    /// What the watch and its thread share. The thread holds it, not the watch: released,
    /// the watch stops the thread (each kit run makes watches; a thread per watch kept
    /// for good was a leak of the kit's own, which its own cleanup check then counted).
    private final class Queue: @unchecked Sendable {  // `jobs` and `stopped` under `lock`
        let lock = NSLock()
        var jobs: [UnownedJob] = []
        /// Once set, the thread ends and a job that still comes (a task that kept the
        /// preference) goes to the global executor.
        var stopped = false
        let wake = DispatchSemaphore(value: 0)
        let longest = Mutex<Duration>(.zero)
        /// Jobs enqueued whose stretch is not yet measured.
        let unmeasured = Mutex(0)

        /// The next job, or nil once stopped with none left.
        func next() -> UnownedJob? {
            while true {
                wake.wait()
                lock.lock()
                defer { lock.unlock() }
                if !jobs.isEmpty { return jobs.removeFirst() }
                if stopped { return nil }
            }
        }
    }

    private let queue = Queue()
    private var longest: Duration { queue.longest.withLock { $0 } }

    init() {
        let queue = self.queue
        let executor = asUnownedTaskExecutor()
        OwnedThread.start("shutterpipe conformance watch") {
            while let job = queue.next() {
                let started = ContinuousClock.now, before = ThreadUsage.current()
                job.runSynchronously(on: executor)
                let after = ThreadUsage.current()
                // A stretch that blocked (slept, waited for I/O or a lock) held the thread
                // for its whole length. One that only computed held it for its CPU time: on
                // a loaded machine its wall-clock length includes preemptions, which are
                // not the plugin's doing and would fail a plugin that conforms.
                let blocked = after.voluntarySwitches > before.voluntarySwitches
                let held = blocked ? ContinuousClock.now - started : after.cpu - before.cpu
                queue.longest.withLock { $0 = max($0, held) }
                queue.unmeasured.withLock { $0 -= 1 }
            }
        }
    }

    deinit {
        queue.lock.lock()
        queue.stopped = true
        queue.lock.unlock()
        queue.wake.signal()
    }

    func enqueue(_ job: UnownedJob) {
        queue.lock.lock()
        if queue.stopped {
            queue.lock.unlock()
            globalConcurrentExecutor.enqueue(ExecutorJob(job))
            return
        }
        queue.unmeasured.withLock { $0 += 1 }
        queue.jobs.append(job)
        queue.lock.unlock()
        queue.wake.signal()
    }

    /// Runs `work` on the watched thread; returns its result and the longest time any
    /// synchronous stretch of it held the thread.
    func run<T: Sendable>(_ work: @Sendable () async throws -> T) async throws -> (T, Duration) {
        queue.longest.withLock { $0 = .zero }
        let result = try await withTaskExecutorPreference(self) { try await work() }
        // The call's last stretch may still be finishing on the watched thread (its end
        // resumed this code elsewhere): wait until it is measured, or it would count
        // against the next call.
        let settled = ContinuousClock.now + .seconds(10)
        while queue.unmeasured.withLock({ $0 }) > 0 && ContinuousClock.now < settled && !Task.isCancelled { try? await Task.sleep(for: .milliseconds(1)) }
        return (result, longest)
    }
}
