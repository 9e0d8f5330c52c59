import Foundation
@testable import GPhoto2Backend
@testable import GPhoto2Camera
import Synchronization
import Testing

@Suite("camera thread: the order of a worker's requests")
struct CameraThreadTests {
    @Test("a capture overtakes the deletes and status reads still waiting, never an open or a close; idle, the thread ticks at its interval")
    func captureOvertakesWhatYields() {
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
        #expect(order.withLock { $0 } == ["open", "capture 2", "delete 1", "status", "close", "capture 3", "delete 2", "end"])

        // Idle, it ticks at its interval, again and again.
        let before = ticks.withLock { $0 }
        let idle = CameraThread(name: "test idle camera", interval: { .milliseconds(10) }, tick: { ticks.withLock { $0 += 1 } })
        #expect(eventually { ticks.withLock { $0 } - before >= 5 })
        idle.finish {}
    }

    @Test("requests read from the socket by the camera thread itself: the first job runs before any is read, all that arrived during a job are read before the next, the end of the source is not read again")
    func readsItsOwnSource() throws {
        var ends: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &ends) == 0)
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
        #expect(reads.withLock { $0 } == 0, "a request was read before the first job ended")
        release.signal()
        #expect(eventually { order.withLock { $0.count } == 3 })
        #expect(order.withLock { $0 } == ["first", "capture 2", "delete 1"])
        // One sent while idle wakes the thread, long before its next tick.
        _ = "capture 3".withCString { write(ends[0], $0, strlen($0)) }
        #expect(eventually { order.withLock { $0.count } == 4 }, "an idle thread woke only with its tick")
        // The end of the source is read once, and the thread still serves and finishes.
        let beforeEnd = reads.withLock { $0 }
        shutdown(ends[0], Int32(SHUT_WR))
        #expect(eventually { reads.withLock { $0 } > beforeEnd }, "the end of the source was never read")
        let afterEnd = reads.withLock { $0 }
        usleep(100_000)  // as above: time for a reader that loops on the end to show it
        #expect(reads.withLock { $0 } == afterEnd, "the ended source is read again and again")
        thread.finish { order.withLock { $0.append("end") } }
        #expect(order.withLock { $0 } == ["first", "capture 2", "delete 1", "capture 3", "end"])
    }

    /// Waits (blocking: these tests drive the thread synchronously) until `condition`
    /// holds, for up to a minute.
    private func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            usleep(1_000)
        }
        return condition()
    }
}
