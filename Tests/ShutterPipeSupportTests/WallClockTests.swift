#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeSupport
import Synchronization
import Testing

@Suite("WallClock: waiting for a wall-clock moment")
struct WallClockTests {
    @Test("it wakes at the moment, not before, and the thread gets its own priority back")
    func wakesAtTheMoment() async throws {
        for _ in 0..<5 {
            // Far enough ahead that the waiting thread has started by then, also on a loaded
            // machine: what is measured is the wake, not the thread's start.
            let moment = Date().addingTimeInterval(0.5)
            let woke = await WallClock.wait(until: moment)
            // Never early. How late is measured by scripts/bench-rig-mqtt (0.16 ms median);
            // here a bound that only a broken wait misses, whatever the machine's load.
            #expect(woke >= moment && woke.timeIntervalSince(moment) < 1, "\(woke.timeIntervalSince(moment) * 1000) ms late")
        }
        // On a thread of the caller's: the policy it had before is the one it has after.
        let policies = Mutex<(before: Int32, after: Int32)>((-1, -1))
        let done = DispatchSemaphore(value: 0)
        Thread {
            var policy: Int32 = 0, parameters = sched_param()
            pthread_getschedparam(pthread_self(), &policy, &parameters)
            WallClock.sleep(until: Date().addingTimeInterval(0.02))
            var after: Int32 = 0
            pthread_getschedparam(pthread_self(), &after, &parameters)
            policies.withLock { $0 = (policy, after) }
            done.signal()
        }.start()
        await withCheckedContinuation { continuation in Thread { done.wait(); continuation.resume() }.start() }
        let (before, after) = policies.withLock { $0 }
        #expect(before == SCHED_OTHER && after == SCHED_OTHER)
        // A moment already past: at once.
        let past = Date().addingTimeInterval(-1)
        #expect(await WallClock.wait(until: past).timeIntervalSinceNow > -0.05)
    }
}
