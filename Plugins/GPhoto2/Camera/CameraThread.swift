import Foundation
import GPhoto2Backend

/// The one thread of a worker that calls libgphoto2 (it is not thread-safe): the
/// requests, one at a time, and between them the session's tick at its poll interval.
///
/// Requests run in the order they came, except that a capture overtakes the requests
/// still waiting that yield to it (``GPhoto2Backend/WorkerRequest/yieldsToCapture``: the
/// last shot's delete, a status read). In a rig, the last photo's deletes reach the
/// workers while the next tap's fire order does; a camera that ran its delete first
/// would fire a delete's round trip after the others.
final class CameraThread: @unchecked Sendable {  // its state is guarded by `condition`
    private struct Job {
        let yieldsToCapture: Bool
        let run: () -> Void
    }

    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var stopping = false
    private var nextTick = ContinuousClock.now
    private let interval: () -> Duration
    private let tick: () -> Void
    private let ended = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - interval: the time between ticks (which keep their pace while requests run),
    ///     asked on the thread after each job.
    ///   - tick: what runs when no request waits and the interval has passed.
    init(name: String, interval: @escaping () -> Duration, tick: @escaping () -> Void) {
        self.interval = interval
        self.tick = tick
        let thread = Thread { [self] in loop() }
        thread.name = name
        thread.start()
    }

    /// Queues `request`'s job: a capture goes before the jobs at the end of the queue
    /// that yield to it; anything else goes last.
    func submit(_ request: WorkerRequest, _ run: @escaping () -> Void) {
        condition.withLock {
            let job = Job(yieldsToCapture: request.yieldsToCapture, run: run)
            if case .capture = request {
                let position = (jobs.lastIndex { !$0.yieldsToCapture }).map { $0 + 1 } ?? 0
                jobs.insert(job, at: position)
            } else {
                jobs.append(job)
            }
            condition.signal()
        }
    }

    /// Queues work that is no request (loading the drivers at start).
    func submit(_ run: @escaping () -> Void) {
        condition.withLock {
            jobs.append(Job(yieldsToCapture: false, run: run))
            condition.signal()
        }
    }

    /// Runs what is queued, then `last`, and ends the thread; returns when it has ended.
    func finish(with last: @escaping () -> Void) {
        condition.withLock {
            jobs.append(Job(yieldsToCapture: false, run: last))
            stopping = true
            condition.signal()
        }
        ended.wait()
    }

    private func loop() {
        let first = ContinuousClock.now + interval()
        condition.lock()
        nextTick = first
        while true {
            if !jobs.isEmpty {
                let job = jobs.removeFirst()
                condition.unlock()
                job.run()
                let soonest = ContinuousClock.now + interval()  // the interval may have changed (an open)
                condition.lock()
                nextTick = min(nextTick, soonest)
                continue
            }
            if stopping { break }
            let now = ContinuousClock.now
            if now >= nextTick {
                condition.unlock()
                tick()
                let next = ContinuousClock.now + interval()
                condition.lock()
                nextTick = next
                continue
            }
            let wait = nextTick - now
            _ = condition.wait(until: Date(timeIntervalSinceNow: Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18))
        }
        condition.unlock()
        ended.signal()
    }
}
