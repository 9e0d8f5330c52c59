#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import ShutterPipeSupport
import Synchronization

/// Hands signals to a thread of their own, from the moment ``listen(_:_:)`` returns.
///
/// A handler installed with `sigaction` writes the signal's number into a pipe, and one
/// thread reads it and calls the listeners of that signal. A dispatch signal source is not
/// used: it registers on libdispatch's manager thread some time after `resume()`, and a
/// signal sent in between (a stop right after a start; a camera's button pressed as soon as
/// it said it was ready) met `SIG_IGN` and was lost.
///
/// A signal that no listener takes any more is ignored. Signals of a kind sent faster than
/// the thread takes them may arrive as one: the kernel keeps one of each pending.
public enum SignalForwarder {
    /// Stops a listener: its signals reach it no more.
    public final class Listener: Sendable {
        fileprivate let id: UInt64
        fileprivate init(id: UInt64) { self.id = id }
        public func cancel() { SignalForwarder.state.withLock { _ = $0.listeners.removeValue(forKey: id) } }
    }

    private struct State {
        var listeners: [UInt64: (signals: Set<Int32>, received: @Sendable (Int32) -> Void)] = [:]
        var nextID: UInt64 = 0
        var installed: Set<Int32> = []
        /// The pipe's read end once the thread runs.
        var reading: Int32?
    }

    private static let state = Mutex(State())
    /// The pipe's write end, set once before any handler is installed, read by the handler
    /// (a plain load: async-signal-safe).
    nonisolated(unsafe) private static var writeEnd: Int32 = -1

    /// Calls `received` on the forwarding thread for each of `signals` that arrives, until
    /// the listener is cancelled.
    public static func listen(_ signals: [Int32], _ received: @escaping @Sendable (Int32) -> Void) throws(SystemError) -> Listener {
        try startThread()
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.listeners[state.nextID] = (Set(signals), received)
            return state.nextID
        }
        for number in signals where state.withLock({ $0.installed.insert(number).inserted }) {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                let saved = errno
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(SignalForwarder.writeEnd, &byte, 1)
                errno = saved
            }
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            guard sigaction(number, &action, nil) == 0 else {
                state.withLock { _ = $0.installed.remove(number) }
                throw SystemError("install a handler for signal \(number)")
            }
        }
        return Listener(id: id)
    }

    private static func startThread() throws(SystemError) {
        try state.withLock { state throws(SystemError) in
            guard state.reading == nil else { return }
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else { throw SystemError("make a pipe for signals") }
            // Children started later (plugins' programs, camera workers) do not inherit it.
            ends.forEach { _ = fcntl($0, F_SETFD, FD_CLOEXEC) }
            // A handler never blocks: in a storm that fills the pipe a signal is dropped, as
            // the kernel drops one of a kind already pending.
            _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
            writeEnd = ends[1]
            state.reading = ends[0]
        }
        guard let readEnd = state.withLock({ $0.reading }), started.withLock({ started in defer { started = true }; return !started }) else { return }
        OwnedThread.start("shutterpipe signals") {
            var byte: UInt8 = 0
            while true {
                let count = read(readEnd, &byte, 1)
                if count < 0 && errno == EINTR { continue }
                guard count == 1 else { return }
                let number = Int32(byte)
                let listeners = state.withLock { $0.listeners.values.filter { $0.signals.contains(number) }.map(\.received) }
                listeners.forEach { $0(number) }
            }
        }
    }

    private static let started = Mutex(false)
}
