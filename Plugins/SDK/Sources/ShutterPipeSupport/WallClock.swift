#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CShutterPipeSupport
import Foundation

/// Waiting for a wall-clock moment as precisely as the kernel allows: `clock_nanosleep`
/// on CLOCK_REALTIME to the absolute time, with the thread's timer slack at 1 ns (the
/// default 50 µs would be added to every wake-up). Wall-clock, because such moments (a
/// rig's `at`) are compared across hosts whose clocks chrony or NTP keeps together.
public enum WallClock {
    /// Blocks the calling thread until `moment`; returns the moment it woke. For a thread
    /// of one's own (a camera thread): never call it on the cooperative pool.
    ///
    /// Where the process may (root, or an `rtprio` limit: docs/rigs.md), the thread waits
    /// at real-time priority (SCHED_FIFO 1), so that at the moment it runs before every
    /// ordinary thread of the host, and goes back to its own priority once it has noted
    /// the time. Measured with 16 nodes on 2 cores: without it, threads of other processes
    /// that were running held the woken ones back by milliseconds.
    @discardableResult
    public static func sleep(until moment: Date) -> Date {
        _ = shutterpipe_set_timer_slack(1)
        let thread = pthread_self()
        var policy: Int32 = 0
        var previous = sched_param()
        let hadPolicy = pthread_getschedparam(thread, &policy, &previous) == 0
        var realtime = sched_param()
        realtime.sched_priority = 1
        let raised = hadPolicy && pthread_setschedparam(thread, SCHED_FIFO, &realtime) == 0
        let seconds = moment.timeIntervalSince1970.rounded(.down)
        var target = timespec(tv_sec: Int(seconds), tv_nsec: Int((moment.timeIntervalSince1970 - seconds) * 1_000_000_000))
        while clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &target, nil) == EINTR {}
        let woke = Date()
        if raised { _ = pthread_setschedparam(thread, policy, &previous) }
        return woke
    }

    /// Whether this process may wait at real-time priority (see ``sleep(until:)``).
    public static var realTimeAllowed: Bool {
        var limit = rlimit()  // resource 14: RLIMIT_RTPRIO, which Glibc does not import
        return getuid() == 0 || (getrlimit(__rlimit_resource_t(14), &limit) == 0 && limit.rlim_cur >= 1)
    }

    /// Waits until `moment` on a thread of its own, without holding a pool thread; returns
    /// the moment that thread woke, which is when the caller's work was due, however late
    /// the task itself resumes.
    public static func wait(until moment: Date) async -> Date {
        guard moment.timeIntervalSinceNow > 0 else { return Date() }
        return await OwnedThread.run("shutterpipe wall-clock wait") { sleep(until: moment) }
    }
}
