#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import GPhoto2Backend
import ShutterPipeSupport

/// The one thread of a worker that calls libgphoto2 (it is not thread-safe): the
/// requests, one at a time, and between them the session's tick at its poll interval.
///
/// It is also the thread that reads the requests (``Source``): idle, it waits in `poll`
/// on the backend's socket, so a fire order wakes the thread that fires, not a reader that
/// then wakes it. On 2 busy cores each wake-up can cost milliseconds, and a rig's cameras
/// fire as far apart as their slowest wake-up. Between jobs it reads every request that
/// arrived meanwhile, before it takes the next job.
///
/// Requests run in the order they came, except that a capture overtakes the requests
/// still waiting that yield to it (``GPhoto2Backend/WorkerRequest/yieldsToCapture``: the
/// last shot's delete, a status read). In a rig, the last photo's deletes reach the
/// workers while the next tap's fire order does; a camera that ran its delete first
/// would fire a delete's round trip after the others.
final class CameraThread: @unchecked Sendable {  // `jobs` and `stopping` are guarded by `lock`; the rest is the thread's
    /// Where requests come from: a descriptor to wait on, and what reads one request when
    /// it is readable (on this thread, which it is given to submit what it read). `read`
    /// returns false when the source has ended; it is not asked again.
    struct Source {
        let descriptor: Int32
        let read: (CameraThread) -> Bool
    }

    private struct Job {
        let yieldsToCapture: Bool
        var request: WorkerRequest?
        let run: () -> Void
    }

    private let lock = NSLock()
    private var jobs: [Job] = []
    private var stopping = false
    private let wakeUp: (read: Int32, write: Int32)  // a pipe: a submit wakes the thread's poll
    private var source: Source?
    private var nextTick = ContinuousClock.now
    private let interval: () -> Duration
    private let tick: () -> Void
    private let ended = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - interval: the time between ticks (which keep their pace while requests run),
    ///     asked on the thread after each job.
    ///   - tick: what runs when no request waits and the interval has passed.
    ///   - source: where requests are read from, if they are not only submitted.
    ///   - first: a job that runs before any request is read (loading the drivers).
    ///   - startNow: false to wire things up first, then ``start()``.
    init(name: String, interval: @escaping () -> Duration, tick: @escaping () -> Void,
         source: Source? = nil, first: (() -> Void)? = nil, startNow: Bool = true) {
        var ends: [Int32] = [-1, -1]
        precondition(pipe(&ends) == 0, "pipe failed: \(errno)")
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        wakeUp = (ends[0], ends[1])
        self.interval = interval
        self.tick = tick
        self.source = source
        if let first { jobs.append(Job(yieldsToCapture: false, run: first)) }
        self.name = name
        if startNow { start() }
    }

    private let name: String

    /// Starts the thread (when made with `startNow: false`, once what it calls is wired).
    func start() {
        OwnedThread.start(name) { [self] in loop() }
    }

    deinit {
        close(wakeUp.read)
        close(wakeUp.write)
    }

    /// Queues `request`'s job: a capture goes before the jobs at the end of the queue
    /// that yield to it; anything else goes last.
    func submit(_ request: WorkerRequest, _ run: @escaping () -> Void) {
        let job = Job(yieldsToCapture: request.yieldsToCapture, request: request, run: run)
        lock.withLock {
            if request.isCapture {
                let position = (jobs.lastIndex { !$0.yieldsToCapture }).map { $0 + 1 } ?? 0
                jobs.insert(job, at: position)
            } else {
                jobs.append(job)
            }
        }
        signal()
    }

    /// Queues work that is no request.
    func submit(_ run: @escaping () -> Void) {
        lock.withLock { jobs.append(Job(yieldsToCapture: false, run: run)) }
        signal()
    }

    /// From inside a job: reads what arrived, then runs at once the queued requests that
    /// `matching` picks, out of their turn. (A capture that needs a delete still queued
    /// behind it done first.)
    func runQueuedNow(matching: (WorkerRequest) -> Bool) {
        readWhatArrived()
        let picked = lock.withLock { () -> [Job] in
            let picked = jobs.filter { $0.request.map(matching) ?? false }
            jobs.removeAll { $0.request.map(matching) ?? false }
            return picked
        }
        picked.forEach { $0.run() }
    }

    /// From inside a job or a tick: whether a request waits (read from the source first).
    func hasWaitingRequests() -> Bool {
        readWhatArrived()
        return lock.withLock { !jobs.isEmpty }
    }

    /// Runs what is queued, then `last`, and ends the thread; returns when it has ended.
    func finish(with last: @escaping () -> Void) {
        lock.withLock {
            jobs.append(Job(yieldsToCapture: false, run: last))
            stopping = true
        }
        signal()
        ended.wait()
    }

    private func signal() {
        var one: UInt8 = 1
        _ = write(wakeUp.write, &one, 1)  // a full pipe wakes it as well
    }

    private func loop() {
        nextTick = ContinuousClock.now + interval()
        // The first job runs before anything is read.
        if let first = lock.withLock({ jobs.isEmpty ? nil : jobs.removeFirst() }) { first.run() }
        while true {
            readWhatArrived()
            let next: (job: Job?, stopping: Bool) = lock.withLock {
                jobs.isEmpty ? (nil, stopping) : (jobs.removeFirst(), false)
            }
            if let job = next.job {
                job.run()
                nextTick = min(nextTick, ContinuousClock.now + interval())  // the interval may have changed (an open)
                continue
            }
            if next.stopping { break }
            let now = ContinuousClock.now
            if now >= nextTick {
                tick()
                nextTick = ContinuousClock.now + interval()
                continue
            }
            wait(until: nextTick, from: now)
        }
        ended.signal()
    }

    /// Reads every request the source has ready, without waiting.
    private func readWhatArrived() {
        while let current = source, Self.readable(current.descriptor, timeoutMilliseconds: 0) {
            if !current.read(self) { source = nil }
        }
    }

    /// Waits until `deadline`, a submitted job or a readable source, whichever comes first.
    private func wait(until deadline: ContinuousClock.Instant, from now: ContinuousClock.Instant) {
        let left = deadline - now
        let milliseconds = Int32(clamping: (left.components.seconds * 1000) + (left.components.attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
        var descriptors = [pollfd(fd: wakeUp.read, events: Int16(POLLIN), revents: 0)]
        if let source { descriptors.append(pollfd(fd: source.descriptor, events: Int16(POLLIN), revents: 0)) }
        _ = poll(&descriptors, nfds_t(descriptors.count), max(1, milliseconds))
        if descriptors[0].revents != 0 {
            var drained = [UInt8](repeating: 0, count: 64)
            while read(wakeUp.read, &drained, drained.count) > 0 {}
        }
    }

    private static func readable(_ descriptor: Int32, timeoutMilliseconds: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, timeoutMilliseconds) > 0 && entry.revents != 0
    }
}
