import Foundation
import ShutterPipeSupport
import Synchronization

/// Server-sent events to every page and script listening on `/events`. Each listener has
/// a bounded queue read by its own connection thread: one that stops reading is dropped
/// once 256 events wait, and slows nobody.
final class EventHub: Sendable {
    static let queueLimit = 256
    static let keepAlive: Duration = .seconds(15)

    private let state = Mutex<(listeners: [ObjectIdentifier: Listener], closed: Bool, onClose: [@Sendable () -> Void])>(([:], false, []))

    /// A new listener; it gets every event published from now on.
    func listen() -> Listener {
        let listener = Listener { [weak self] gone in _ = self?.state.withLock { $0.listeners.removeValue(forKey: ObjectIdentifier(gone)) } }
        let closed = state.withLock { state -> Bool in
            if !state.closed { state.listeners[ObjectIdentifier(listener)] = listener }
            return state.closed
        }
        if closed { listener.end() }
        return listener
    }

    /// Sends `object` as JSON under event name `name` to every listener.
    func publish(_ name: String, _ object: [String: Any]) {
        let data = JSONText.data(object)
        let frame = Data("event: \(name)\ndata: ".utf8) + data + Data("\n\n".utf8)
        let listeners = state.withLock { Array($0.listeners.values) }
        for listener in listeners where !listener.offer(frame) {
            _ = state.withLock { $0.listeners.removeValue(forKey: ObjectIdentifier(listener)) }
        }
    }

    /// How many listen now.
    var count: Int { state.withLock { $0.listeners.count } }

    /// Ends every stream (the server is stopping) and tells whoever waits.
    func close() {
        let (listeners, waiting) = state.withLock { state -> ([Listener], [@Sendable () -> Void]) in
            if state.closed { return ([], []) }
            state.closed = true
            defer { state.listeners = [:]; state.onClose = [] }
            return (Array(state.listeners.values), state.onClose)
        }
        listeners.forEach { $0.end() }
        waiting.forEach { $0() }
    }

    /// Calls `body` once the hub is closed (at once if it is).
    func onClose(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.closed { return true }
            state.onClose.append(body)
            return false
        }
        if now { body() }
    }

    /// One listener's stream.
    final class Listener: HTTPStream, @unchecked Sendable {  // `frames`, `pending` and `ended` under `lock`
        private let lock = NSCondition()
        private var frames: [Data] = [Data("retry: 2000\n: shutterpipe events\n\n".utf8)]
        private var pending = Data()
        private var ended = false
        private let onClosed: @Sendable (Listener) -> Void

        init(onClosed: @escaping @Sendable (Listener) -> Void) {
            self.onClosed = onClosed
        }

        func closed() {
            end()
            onClosed(self)
        }

        /// Queues a frame; false when the listener is too far behind (it is then ended).
        func offer(_ frame: Data) -> Bool {
            lock.lock()
            defer { lock.unlock() }
            guard !ended else { return false }
            guard frames.count < EventHub.queueLimit else {
                ended = true
                lock.broadcast()
                return false
            }
            frames.append(frame)
            lock.signal()
            return true
        }

        func end() {
            lock.lock()
            ended = true
            lock.broadcast()
            lock.unlock()
        }

        func next(maximum: Int) -> Data? {
            lock.lock()
            defer { lock.unlock() }
            while pending.isEmpty {
                if let frame = frames.first {
                    frames.removeFirst()
                    pending = frame
                    break
                }
                if ended { return nil }
                if !lock.wait(until: Date(timeIntervalSinceNow: 15)) && frames.isEmpty && !ended {
                    pending = Data(": keep-alive\n\n".utf8)  // a quiet stream stays open through proxies and timeouts
                }
            }
            let chunk = pending.prefix(maximum)
            pending = Data(pending.dropFirst(chunk.count))
            return Data(chunk)
        }
    }
}
