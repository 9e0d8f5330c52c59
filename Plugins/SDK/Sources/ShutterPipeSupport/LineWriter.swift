import Foundation
import Synchronization

/// Writes lines through a blocking `write` (standard output, a pipe) on a thread of its
/// own, in order, so that no caller ever blocks on a reader that stopped reading: a
/// trigger's `sync` waits for its line a moment at most, without holding a thread of the
/// cooperative pool.
///
/// At most `limit` lines wait. Past that a line is dropped, and `onDrop` is told at the
/// first drop of a stall (for a log line): the writer never grows without bound.
public final class LineWriter: Sendable {
    /// Told once its line is written.
    private typealias Waiter = @Sendable () -> Void

    private struct State {
        var lines: [(String, Waiter?)] = []
        var dropped = 0
        var stalled = false
        var closed = false
        /// When the write under way began, if one is.
        var writingSince: ContinuousClock.Instant?
    }

    /// Shared with the writer thread.
    private final class Queue: Sendable {
        let state = Mutex(State())
        let ready = DispatchSemaphore(value: 0)
    }

    private let queue = Queue()
    private let limit: Int
    private let onDrop: @Sendable (Int) -> Void

    /// - Parameters:
    ///   - write: writes one line, blocking as long as it must.
    ///   - onDrop: told how many lines were dropped so far, at the first drop of a stall.
    public init(label: String, limit: Int = 1_000, write: @escaping @Sendable (String) -> Void,
                onDrop: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.limit = limit
        self.onDrop = onDrop
        OwnedThread.start(label) { [queue] in
            while true {
                queue.ready.wait()
                let next = queue.state.withLock { state -> (String, Waiter?)?? in
                    if let first = state.lines.first { state.lines.removeFirst(); return first }
                    return state.closed ? .some(nil) : nil
                }
                guard let next else { continue }
                guard let (line, waiter) = next else { return }  // closed, and everything written
                queue.state.withLock { $0.writingSince = .now }
                write(line)
                queue.state.withLock { $0.writingSince = nil }
                waiter?()
            }
        }
    }

    deinit {
        queue.state.withLock { $0.closed = true }
        queue.ready.signal()
    }

    /// Queues `line`; returns once it is written, or after `patience` (it is still written
    /// later, in order), or at once when it was dropped or a write has been stuck longer
    /// than `patience` already.
    public func write(_ line: String, patience: Duration = .milliseconds(200)) async {
        _ = await waitForCallback(within: patience) { written in
            var stuck = false
            let queued = append(line, waiter: written) { state in
                if let since = state.writingSince, ContinuousClock.now - since > patience { stuck = true }
            }
            if !queued || stuck { written() }
        }
    }

    /// Queues `line` and returns at once, from any thread; it is written in order with
    /// the others (or dropped, like them, past the limit).
    public func enqueue(_ line: String) {
        _ = append(line, waiter: nil) { _ in }
    }

    /// Queues a line unless `limit` lines wait; returns whether it was queued.
    private func append(_ line: String, waiter: Waiter?, inspecting: (State) -> Void) -> Bool {
        let dropped = queue.state.withLock { state -> Int? in
            inspecting(state)
            guard state.lines.count < limit else {
                state.dropped += 1
                defer { state.stalled = true }
                return state.stalled ? -1 : state.dropped
            }
            state.stalled = false
            state.lines.append((line, waiter))
            return nil
        }
        guard let dropped else {
            queue.ready.signal()
            return true
        }
        if dropped > 0 { onDrop(dropped) }
        return false
    }
}
