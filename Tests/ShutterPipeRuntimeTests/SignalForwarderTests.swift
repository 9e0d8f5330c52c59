#if canImport(Glibc)
import Glibc
#endif
import ShutterPipeRuntime
import Synchronization
import TestSupport
import Testing

@Suite("signals handed to a thread")
struct SignalForwarderTests {
    @Test("a signal sent the moment listen returns is taken, every time, by the listener of that signal only; once cancelled it is ignored, not the process's end")
    func takenFromTheStart() async throws {
        let taken = Mutex<[Int32]>([])
        let other = Mutex(0)
        // SIGURG: nothing else in the test process listens for it, and its default is to ignore it.
        let listener = try SignalForwarder.listen([SIGURG]) { number in taken.withLock { $0.append(number) } }
        let bystander = try SignalForwarder.listen([SIGWINCH]) { _ in other.withLock { $0 += 1 } }
        defer { bystander.cancel() }
        for sent in 1...5 {
            kill(getpid(), SIGURG)
            // One at a time: two of a kind pending at once arrive as one.
            #expect(await eventually(timeout: .seconds(30)) { taken.withLock { $0.count } == sent })
        }
        #expect(taken.withLock { $0 } == Array(repeating: SIGURG, count: 5))
        #expect(other.withLock { $0 } == 0)
        listener.cancel()
        kill(getpid(), SIGURG)
        // Taken by the thread and dropped: a second listener sees the next one, the first none.
        let after = Mutex(0)
        let second = try SignalForwarder.listen([SIGURG]) { _ in after.withLock { $0 += 1 } }
        defer { second.cancel() }
        kill(getpid(), SIGURG)
        #expect(await eventually(timeout: .seconds(30)) { after.withLock { $0 } >= 1 })
        #expect(taken.withLock { $0.count } == 5)
    }
}
