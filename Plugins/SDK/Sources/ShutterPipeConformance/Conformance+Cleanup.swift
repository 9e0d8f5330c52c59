#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

extension Conformance {
    /// Checks that a trigger ends what it started: made, run, stimulated and cancelled
    /// `cycles` times over (a session that enters and leaves, a config reloaded), it leaves
    /// no thread and no descriptor behind. A trigger that reads a device or a socket on a
    /// thread of its own must stop that thread and close what it opened when `run` is
    /// cancelled (docs/plugins.md, "Stopping"); one that leaks one of each per stop runs
    /// out of descriptors, or threads, in a long day.
    ///
    /// The process's threads (`/proc/self/task`) and descriptors (`/proc/self/fd`) are
    /// noted after a first cycle (which may start what lives for the process: a library's
    /// own threads), and those the other cycles add and leave are counted, given five
    /// seconds to end.
    public static func checkTriggerCleansUp(cycles: Int = 8, _ make: @Sendable () throws -> any TriggerSource,
                                            stimulate: @Sendable () async throws -> Void = {}) async -> [String] {
        var problems: [String] = []
        func cycle() async {
            do {
                let trigger = try make()
                let run = Task { try await trigger.run(delivering: EventChannel { _ in }) }
                try await Task.sleep(for: .milliseconds(50))  // under way: what it starts has started
                try await stimulate()
                run.cancel()
                if (try? await withDeadline(.seconds(30), "a cancelled trigger") { _ = try? await run.value; return true }) != true {
                    problems.append("run did not return within 30 s of being cancelled")
                }
            } catch {
                problems.append("the trigger failed: \(error)")
            }
        }
        await cycle()
        // What is there now, by thread ID and descriptor number: those the runs add and
        // leave are counted, whatever other work of the process starts and ends meanwhile.
        let before = (threads: Self.entries("/proc/self/task"), descriptors: Self.descriptors())
        for _ in 1..<cycles { await cycle() }
        func added() -> (threads: Int, descriptors: Int) {
            (Self.entries("/proc/self/task").subtracting(before.threads).count, Self.descriptors().subtracting(before.descriptors).count)
        }
        var left = added()
        let settle = ContinuousClock.now + .seconds(5)
        let allowance = cycles / 2  // a leak leaves one a cycle at least; other work's may come and go
        while (left.threads > allowance || left.descriptors > allowance) && ContinuousClock.now < settle && !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(100))
            left = added()
        }
        if left.threads > allowance {
            problems.append("\(left.threads) thread(s) more after \(cycles - 1) runs were cancelled and returned: a trigger must stop the threads it started when its run is cancelled")
        }
        if left.descriptors > allowance {
            problems.append("\(left.descriptors) descriptor(s) more after \(cycles - 1) runs were cancelled and returned: a trigger must close what it opened when its run is cancelled")
        }
        return problems
    }

    /// The process's open descriptors, each as "number → what it is open on": a number that
    /// another test closed and this trigger got again, open on something else, counts as
    /// new (by number alone, a leak in a busy process hides behind the numbers others free).
    static func descriptors() -> Set<String> {
        Set(entries("/proc/self/fd").map { number in
            "\(number) → \((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(number)")) ?? "?")"
        })
    }

    /// The entries of a /proc folder.
    static func entries(_ folder: String) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
    }
}
