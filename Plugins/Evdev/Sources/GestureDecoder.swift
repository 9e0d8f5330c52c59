import ShutterPipeKit

/// A press pattern on one key.
public enum Gesture: String, Sendable, CaseIterable {
    case single, double, triple, long

    var taps: Int? {
        switch self {
        case .single: return 1
        case .double: return 2
        case .triple: return 3
        case .long: return nil
        }
    }
}

/// What a key or a gesture does: a shutter event, or a sequence the config plans
/// (`KEY_F5:long: sequence spin`: a foot pedal held starts the spin).
public enum KeyAction: Sendable, Equatable {
    case event(ShutterEvent)
    case sequence(String)

    public static let capture = KeyAction.event(.capture)
    public static let enter = KeyAction.event(.enter)
    public static let exit = KeyAction.event(.exit)

    /// `capture`, `sequence spin`: as the config writes it.
    public var rawValue: String {
        switch self {
        case .event(let event): return event.rawValue
        case .sequence(let name): return "sequence \(name)"
        }
    }
}

/// Turns key events into shutter events, on the kernel's timestamps.
///
/// A key bound only by its name (`KEY_VOLUMEUP: capture`) fires at once on press: no tap
/// window delays it. A key with gesture bindings (`KEY_ENTER:double: enter`) is decoded:
/// taps within the tap window count together, a press held past the long-press time is a
/// long press. Presses closer than the debounce time to the key's last release are
/// contact bounce and ignored; autorepeat (value 2) is ignored.
public struct GestureDecoder: Sendable {
    /// Timing of the decoding, in microseconds.
    public struct Timing: Sendable, Equatable {
        public var debounce: Int64 = 40_000
        public var tapWindow: Int64 = 350_000
        public var longPress: Int64 = 600_000
        public init() {}
    }

    /// What a key does.
    public struct Binding: Sendable, Equatable {
        /// Fires on press (for keys without gestures).
        public var immediate: KeyAction?
        /// Actions by gesture.
        public var gestures: [Gesture: KeyAction] = [:]
        public init(immediate: KeyAction? = nil, gestures: [Gesture: KeyAction] = [:]) {
            self.immediate = immediate
            self.gestures = gestures
        }
    }

    /// A decoded action and what caused it ("KEY_ENTER double").
    public struct Output: Sendable, Equatable {
        public var event: KeyAction
        public var origin: String
    }

    private struct KeyState: Sendable {
        var pressedAt: Int64?
        var lastPress: Int64?
        var lastRelease: Int64?
        var taps = 0
        var bouncing = false
        var longFired = false
    }

    public let bindings: [UInt16: Binding]
    public let timing: Timing
    private var keys: [UInt16: KeyState] = [:]

    public init(bindings: [UInt16: Binding], timing: Timing = Timing()) {
        self.bindings = bindings
        self.timing = timing
    }

    /// Feeds one event; returns what it completed.
    public mutating func feed(_ event: InputEvent) -> [Output] {
        guard event.type == InputEvent.key, let binding = bindings[event.code], event.value != 2 else { return [] }
        var state = keys[event.code] ?? KeyState()
        defer { keys[event.code] = state }
        let name = KeyNames.name(event.code)
        if binding.gestures.isEmpty {
            guard event.value == 1, let immediate = binding.immediate else { return [] }
            if let last = state.lastPress, event.time - last < timing.debounce { return [] }
            state.lastPress = event.time
            return [Output(event: immediate, origin: name)]
        }
        if event.value == 1 {
            if state.pressedAt != nil { return [] }
            if let release = state.lastRelease, event.time - release < timing.debounce {
                state.bouncing = true
                return []
            }
            state.pressedAt = event.time
            state.longFired = false
            return []
        }
        // Release.
        if state.bouncing { state.bouncing = false; return [] }
        guard let pressed = state.pressedAt else { return [] }
        state.pressedAt = nil
        state.lastRelease = event.time
        if state.longFired { state.longFired = false; return [] }
        if event.time - pressed >= timing.longPress, let long = binding.gestures[.long] {
            state.taps = 0
            return [Output(event: long, origin: "\(name) long")]
        }
        state.taps += 1
        let most = binding.gestures.keys.compactMap(\.taps).max() ?? 1
        if state.taps >= most { return complete(&state, binding, name) }
        return []
    }

    /// Completes gestures whose time is up at `now` (kernel clock, microseconds).
    public mutating func flush(now: Int64) -> [Output] {
        var outputs: [Output] = []
        for (code, var state) in keys {
            guard let binding = bindings[code] else { continue }
            let name = KeyNames.name(code)
            if let pressed = state.pressedAt, !state.longFired, now - pressed >= timing.longPress, let long = binding.gestures[.long] {
                state.longFired = true
                state.taps = 0
                outputs.append(Output(event: long, origin: "\(name) long"))
            }
            if state.taps > 0, state.pressedAt == nil, let release = state.lastRelease, now - release >= timing.tapWindow {
                outputs += complete(&state, binding, name)
            }
            keys[code] = state
        }
        return outputs
    }

    /// When `flush` next has something to decide, if ever.
    public var nextDeadline: Int64? {
        var deadline: Int64?
        for (code, state) in keys {
            guard let binding = bindings[code] else { continue }
            if let pressed = state.pressedAt, !state.longFired, binding.gestures[.long] != nil {
                deadline = min(deadline ?? .max, pressed + timing.longPress)
            }
            if state.taps > 0, state.pressedAt == nil, let release = state.lastRelease {
                deadline = min(deadline ?? .max, release + timing.tapWindow)
            }
        }
        return deadline
    }

    /// Forgets every key's state (after SYN_DROPPED, or a device that went away).
    public mutating func reset() { keys.removeAll() }

    private func complete(_ state: inout KeyState, _ binding: Binding, _ name: String) -> [Output] {
        let taps = state.taps
        state.taps = 0
        let gesture = Gesture.allCases.first { $0.taps == taps }
        if let gesture, let event = binding.gestures[gesture] ?? (gesture == .single ? binding.immediate : nil) {
            return [Output(event: event, origin: gesture == .single ? name : "\(name) \(gesture.rawValue)")]
        }
        return []
    }
}
