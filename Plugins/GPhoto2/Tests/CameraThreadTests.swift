import Foundation
@testable import GPhoto2Backend
@testable import GPhoto2Camera
import Synchronization
import Testing
import TestSupport

@Suite("camera thread: the order of a worker's requests")
struct CameraThreadTests {
    @Test("a capture overtakes the deletes and status reads still waiting, never an open or a close; idle, the thread ticks at its interval")
    func captureOvertakesWhatYields() async throws {
        // It drives the thread with blocking waits: on a thread of its own, never holding
        // one of the cooperative pool's two threads from the tests running beside it.
        let failures = try await offThePool { Self.overtaking() }
        #expect(failures.isEmpty, "\(failures)")
    }

    /// The checks that failed, in words (checked off the test's task, they are reported
    /// by the test itself).
    private static func overtaking() -> [String] {
        var failures: [String] = []
        let order = Mutex<[String]>([])
        let ticks = Mutex(0)
        let thread = CameraThread(name: "test camera", interval: { .milliseconds(20) }, tick: { ticks.withLock { $0 += 1 } })
        let busy = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        // The camera is busy (an open) while the rest arrives.
        thread.submit(.open(CameraSelection(name: "a"), pollMilliseconds: 20, reconnectLimitMilliseconds: 100, keepTrying: false)) {
            entered.signal()
            busy.wait()
            order.withLock { $0.append("open") }
        }
        entered.wait()
        let requests: [(String, WorkerRequest)] = [
            ("delete 1", .delete([CardPath(folder: "/DCIM", name: "IMG_0001.JPG")])),
            ("status", .status),
            ("capture 2", .capture(atUnixNanoseconds: nil)),
            ("close", .close),
            ("delete 2", .delete([CardPath(folder: "/DCIM", name: "IMG_0002.JPG")])),
            ("capture 3", .capture(atUnixNanoseconds: nil)),
        ]
        for (name, request) in requests {
            thread.submit(request) { order.withLock { $0.append(name) } }
        }
        busy.signal()
        thread.finish { order.withLock { $0.append("end") } }
        check(order.withLock { $0 } == ["open", "capture 2", "delete 1", "status", "close", "capture 3", "delete 2", "end"], "order: \(order.withLock { $0 })", &failures)

        // Idle, it ticks at its interval, again and again.
        let before = ticks.withLock { $0 }
        let idle = CameraThread(name: "test idle camera", interval: { .milliseconds(10) }, tick: { ticks.withLock { $0 += 1 } })
        check(eventually { ticks.withLock { $0 } - before >= 5 }, "the idle thread did not tick five times", &failures)
        idle.finish {}
        return failures
    }

    @Test("requests read from the socket by the camera thread itself: the first job runs before any is read, all that arrived during a job are read before the next, the end of the source is not read again")
    func readsItsOwnSource() async throws {
        let failures = try await offThePool { Self.readingItsOwnSource() }
        #expect(failures.isEmpty, "\(failures)")
    }

    private static func readingItsOwnSource() -> [String] {
        var failures: [String] = []
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &ends) == 0 else { return ["socketpair: \(String(cString: strerror(errno)))"] }
        defer { close(ends[0]) }
        let order = Mutex<[String]>([])
        let reads = Mutex(0)
        let release = DispatchSemaphore(value: 0)
        let readable = CameraThread.Source(descriptor: ends[1]) { thread in
            reads.withLock { $0 += 1 }
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = read(ends[1], &buffer, buffer.count)
            guard count > 0 else { return false }
            let name = String(decoding: buffer.prefix(count), as: UTF8.self)
            let request: WorkerRequest = name.hasPrefix("capture") ? .capture(atUnixNanoseconds: nil) : .delete([CardPath(folder: "/DCIM", name: name)])
            thread.submit(request) { order.withLock { $0.append(name) } }
            return true
        }
        // Its tick is ten minutes away: a request that wakes it wakes it, not the tick.
        let thread = CameraThread(name: "test camera", interval: { .seconds(600) }, tick: {}, source: readable,
                                  first: { release.wait(); order.withLock { $0.append("first") } })
        // Sent while the first job runs: nothing may be read before it ends. (The pause only
        // gives a reader that broke the rule time to show it; the rule passes without it.)
        for name in ["delete 1", "capture 2"] { _ = name.withCString { write(ends[0], $0, strlen($0)) } }
        usleep(50_000)
        check(reads.withLock { $0 } == 0, "a request was read before the first job ended", &failures)
        release.signal()
        check(eventually { order.withLock { $0.count } == 3 }, "the first job's followers never ran: \(order.withLock { $0 })", &failures)
        check(order.withLock { $0 } == ["first", "capture 2", "delete 1"], "order: \(order.withLock { $0 })", &failures)
        // One sent while idle wakes the thread, long before its next tick.
        _ = "capture 3".withCString { write(ends[0], $0, strlen($0)) }
        check(eventually { order.withLock { $0.count } == 4 }, "an idle thread woke only with its tick", &failures)
        // The end of the source is read once, and the thread still serves and finishes.
        let beforeEnd = reads.withLock { $0 }
        shutdown(ends[0], Int32(SHUT_WR))
        check(eventually { reads.withLock { $0 } > beforeEnd }, "the end of the source was never read", &failures)
        let afterEnd = reads.withLock { $0 }
        usleep(100_000)  // as above: time for a reader that loops on the end to show it
        check(reads.withLock { $0 } == afterEnd, "the ended source is read again and again", &failures)
        thread.finish { order.withLock { $0.append("end") } }
        check(order.withLock { $0 } == ["first", "capture 2", "delete 1", "capture 3", "end"], "order: \(order.withLock { $0 })", &failures)
        return failures
    }

    /// Waits (blocking: these tests drive the thread synchronously) until `condition`
    /// holds, for up to a minute.
    private static func check(_ condition: Bool, _ message: String, _ failures: inout [String]) {
        if !condition { failures.append(message) }
    }

    private static func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            usleep(1_000)
        }
        return condition()
    }
}
