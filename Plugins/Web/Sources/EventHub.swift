import Foundation
import ShutterPipeSupport
import Synchronization

/// Server-sent events to every page and script listening on `/events`. Each listener has
/// a bounded queue read by its own connection thread (``Listener``): one that stops
/// reading is dropped once it is 256 events or 10 s behind, and slows nobody. A watch
/// once a second drops those behind even when no event comes to notice it.
final class EventHub: Sendable {
    private let state = Mutex<(listeners: [ObjectIdentifier: Listener], closed: Bool, onClose: [@Sendable () -> Void])>(([:], false, []))
    /// A dispatch source is safe to cancel from any thread.
    private struct Watch: @unchecked Sendable { let timer: DispatchSourceTimer }
    private let watch: Watch

    init() {
        let watch = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "shutterpipe events watch"))
        self.watch = Watch(timer: watch)
        watch.schedule(deadline: .now() + 1, repeating: 1, leeway: .milliseconds(100))
        watch.setEventHandler { [weak self] in self?.dropStale() }
        watch.resume()
    }

    deinit { watch.timer.cancel() }

    /// Ends the listeners that are too far behind or whose client has left.
    private func dropStale() {
        let listeners = state.withLock { Array($0.listeners.values) }
        for listener in listeners where !listener.check() {
            _ = state.withLock { $0.listeners.removeValue(forKey: ObjectIdentifier(listener)) }
        }
    }

    /// A new listener; it gets every event published from now on.
    /// `onDropped` hears why, if it is dropped for being too far behind.
    func listen(_ access: WebAccess = .operatorAccess, onDropped: @escaping @Sendable (String) -> Void = { _ in }) -> Listener {
        let listener = Listener(access: access, onClosed: { [weak self] gone in _ = self?.state.withLock { $0.listeners.removeValue(forKey: ObjectIdentifier(gone)) } },
                                onDropped: onDropped)
        let closed = state.withLock { state -> Bool in
            if !state.closed { state.listeners[ObjectIdentifier(listener)] = listener }
            return state.closed
        }
        if closed { listener.end() }
        return listener
    }

    /// Sends `object` as JSON under event name `name` to every listener.
    func publish(_ name: String, _ object: [String: Any]) {
        publish(name) { _ in object }
    }

    /// Sends the event `name` to every listener, as `object` makes it for what that listener
    /// may see (``WebAccess``); nothing to one for which it gives `nil`. Made once per
    /// kind of access, not per listener.
    func publish(_ name: String, for object: (WebAccess) -> [String: Any]?) {
        let listeners = state.withLock { Array($0.listeners.values) }
        var frames: [WebAccess: Data?] = [:]
        for listener in listeners {
            let frame: Data? = frames[listener.access] ?? {
                let made = object(listener.access).map { Data("event: \(name)\ndata: ".utf8) + JSONText.data($0) + Data("\n\n".utf8) }
                frames[listener.access] = .some(made)
                return made
            }()
            guard let frame else { continue }
            if !listener.offer(frame) {
                _ = state.withLock { $0.listeners.removeValue(forKey: ObjectIdentifier(listener)) }
            }
        }
    }

    /// How many listen now.
    var count: Int { state.withLock { $0.listeners.count } }

    /// Ends every stream (the server is stopping) and tells whoever waits.
    func close() {
        watch.timer.cancel()
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
}
