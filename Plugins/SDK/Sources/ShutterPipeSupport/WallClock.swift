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
    @discardableResult
    public static func sleep(until moment: Date) -> Date {
        _ = shutterpipe_set_timer_slack(1)
        let seconds = moment.timeIntervalSince1970.rounded(.down)
        var target = timespec(tv_sec: Int(seconds), tv_nsec: Int((moment.timeIntervalSince1970 - seconds) * 1_000_000_000))
        while clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &target, nil) == EINTR {}
        return Date()
    }

    /// Waits until `moment` on a thread of its own, without holding a pool thread; returns
    /// the moment that thread woke, which is when the caller's work was due, however late
    /// the task itself resumes.
    public static func wait(until moment: Date) async -> Date {
        guard moment.timeIntervalSinceNow > 0 else { return Date() }
        return await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: sleep(until: moment)) }
            thread.name = "shutterpipe wall-clock wait"
            thread.start()
        }
    }
}
