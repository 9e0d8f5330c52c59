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
            ("capture 2", .capture),
            ("close", .close),
            ("delete 2", .delete([CardPath(folder: "/DCIM", name: "IMG_0002.JPG")])),
            ("capture 3", .capture),
        ]
        for (name, request) in requests {
            thread.submit(request) { order.withLock { $0.append(name) } }
        }
        busy.signal()
        thread.finish { order.withLock { $0.append("end") } }
        #expect(order.withLock { $0 } == ["open", "capture 2", "delete 1", "status", "close", "capture 3", "delete 2", "end"])

        // Idle, it ticks at its interval.
        let idle = CameraThread(name: "test idle camera", interval: { .milliseconds(10) }, tick: { ticks.withLock { $0 += 1 } })
        let before = ticks.withLock { $0 }
        usleep(300_000)
        idle.finish {}
        #expect(ticks.withLock { $0 } - before >= 5)
    }
}
