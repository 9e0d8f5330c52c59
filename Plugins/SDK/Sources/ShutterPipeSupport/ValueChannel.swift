import Dispatch
import Synchronization

/// A bounded queue of values from any thread or task to one consumer that waits for them on
/// a thread of its own: a connection's writer, a stream's sender, a decoder fed by a
/// download. The one way such a hand-over is written (the socket trigger's replies, a
/// live-view viewer's frames, a download's pieces for its preview decoder), so that each
/// of them no longer keeps a lock, a condition and its own rules about ending.
///
/// - **Sending never blocks.** A full channel refuses the value (``Overflow/refuse``: the
///   caller decides, a client that reads nothing is dropped) or drops its oldest
///   (``Overflow/dropOldest``: a live view keeps the newest frame).
/// - **Receiving waits on the calling thread**, until a value comes, the channel is closed
///   and drained, or the deadline passes. Never call ``receive(until:)`` from the
///   cooperative pool: it blocks.
/// - **Closing ends it**, from either side: ``finish()`` lets the consumer take what is
///   queued first (a client that closed its end still gets its replies); ``cancel()``
///   drops it (a client hung up). Either wakes a waiting consumer at once.
public final class ValueChannel<Element: Sendable>: Sendable {
    /// What a full channel does with one more value.
    public enum Overflow: Sendable {
        /// Refuses it: ``send(_:)`` says ``Sent/full``.
        case refuse
        /// Drops the oldest queued value to make room.
        case dropOldest
    }

    /// What ``send(_:)`` did.
    public enum Sent: Sendable, Equatable {
        case queued
        /// Full, and refusing (``Overflow/refuse``): nothing was queued.
        case full
        /// Closed: nothing was queued, and nothing will be.
        case closed
    }

    /// What ``receive(until:)`` got.
    public enum Received {
        case value(Element)
        /// Closed, and nothing left to take.
        case closed
        /// The deadline passed first.
        case timedOut
    }

    private struct State: ~Copyable {
        var queue: [Element] = []
        var head = 0
        var closed = false
        /// The consumer holds a value it took and has not come back for the next.
        var handling = false
        var count: Int { queue.count - head }
    }

    /// The most values it holds.
    public let capacity: Int
    public let overflow: Overflow
    private let state = Mutex(State())
    /// Signalled once per value and at closing; a consumer woken with nothing to take
    /// (a value dropped to make room) waits again.
    private let arrived = DispatchSemaphore(value: 0)

    public init(capacity: Int, overflow: Overflow = .refuse) {
        precondition(capacity > 0, "a channel holds at least one value")
        self.capacity = capacity
        self.overflow = overflow
    }

    /// Queues `value` for the consumer; returns at once.
    @discardableResult
    public func send(_ value: Element) -> Sent {
        let sent = state.withLock { state -> Sent in
            guard !state.closed else { return .closed }
            if state.count >= capacity {
                guard overflow == .dropOldest else { return .full }
                state.head += 1
            }
            state.queue.append(value)
            return .queued
        }
        if sent == .queued { arrived.signal() }
        return sent
    }

    /// The next value, waiting for it on this thread until `deadline` (none: as long as it
    /// takes). The value is being handled (``isIdle`` is false) until the consumer comes
    /// back for the next one.
    public func receive(until deadline: ContinuousClock.Instant? = nil) -> Received {
        while true {
            let taken = state.withLock { state -> Received? in
                state.handling = false
                if state.count > 0 {
                    let value = state.queue[state.head]
                    state.head += 1
                    if state.head > 64 && state.head * 2 > state.queue.count {
                        state.queue.removeFirst(state.head)
                        state.head = 0
                    }
                    state.handling = true
                    return .value(value)
                }
                return state.closed ? .closed : nil
            }
            if let taken { return taken }
            guard let deadline else {
                arrived.wait()
                continue
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return .timedOut }
            let (seconds, attoseconds) = left.components
            let nanoseconds = Int(min(seconds, 86_400)) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
            if arrived.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .timedOut,
               state.withLock({ $0.count == 0 && !$0.closed }) {
                return .timedOut
            }
        }
    }

    /// No more values: the consumer takes what is queued, then receives ``Received/closed``.
    public func finish() {
        state.withLock { $0.closed = true }
        arrived.signal()
    }

    /// No more values, and what is queued is dropped: the consumer receives
    /// ``Received/closed`` next.
    public func cancel() {
        state.withLock { state in
            state.closed = true
            state.queue = []
            state.head = 0
        }
        arrived.signal()
    }

    /// How many values wait.
    public var count: Int { state.withLock { $0.count } }

    /// Whether it was finished or cancelled.
    public var isClosed: Bool { state.withLock { $0.closed } }

    /// Nothing waits, and the consumer is not handling a value it took.
    public var isIdle: Bool { state.withLock { $0.count == 0 && !$0.handling } }
}
