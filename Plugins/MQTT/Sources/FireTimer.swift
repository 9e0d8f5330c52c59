#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CLinux
import Foundation

/// Fires at a wall-clock moment, as precisely as the kernel allows: a thread of its own
/// sleeps with `clock_nanosleep` on CLOCK_REALTIME to the absolute time, with its timer
/// slack at 1 ns (the default 50 µs would be added to every wake-up). Wall-clock time,
/// because `at` is compared across hosts whose clocks chrony or NTP keeps together.
enum FireTimer {
    static func fire(atUnixMilliseconds at: Double, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            _ = sp_set_timer_slack(1)
            let seconds = (at / 1000).rounded(.down)
            var target = timespec(tv_sec: Int(seconds), tv_nsec: Int((at / 1000 - seconds) * 1_000_000_000))
            while clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &target, nil) == EINTR {}
            body()
        }
        thread.name = "shutterpipe mqtt fire-at"
        thread.start()
    }
}
