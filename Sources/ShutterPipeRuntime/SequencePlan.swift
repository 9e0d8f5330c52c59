import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// A sequence the config plans (`sequences:`): what one `sequence NAME` shoots.
///
/// ```yaml
/// sequences:
///   stack: {kind: focus-stack, frames: 9, from: 1000, step: 4, settle: 100ms}
///   bracket: {kind: bracket, frames: 3, setting: shutterspeed, ev: 1}
///   timelapse: {kind: interval, frames: 600, every: 1s}
///   night: {kind: bulb, frames: 4, exposure: 30s}
/// ```
public struct SequencePlan: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        case bracket
        case focusStack = "focus-stack"
        case interval
        case spin
        case bulb

        /// In words, for answers and the log.
        public var words: String {
            switch self {
            case .bracket: "bracket"
            case .focusStack: "focus stack"
            case .interval: "interval"
            case .spin: "spin"
            case .bulb: "bulb"
            }
        }

        /// The words with their article: "an interval", "a spin".
        public var withArticle: String { (self == .interval ? "an " : "a ") + words }
    }

    public var name: String
    public var kind: Kind
    /// How many frames.
    public var frames: Int
    /// The setting stepped: a bracket's exposure setting (`shutterspeed`, `iso`,
    /// `f-number`), a focus stack's lens setting (`focusdistance`: positions;
    /// `manualfocusdrive`: relative steps). `nil`: the kind's default.
    public var setting: String?
    /// A bracket's step in EV.
    public var ev: Double = 1
    /// A focus stack's step: positions of the setting's choices, or a drive's steps.
    public var step: Int = 1
    /// A focus stack's first position (a value of the setting, as a number: `1000` for
    /// "1000 mm"); `nil`: where the lens is.
    public var from: Double?
    /// A focus stack from near to far (the default) or far to near.
    public var farToNear = false
    /// How long the lens is left to settle after each move, before the frame.
    public var settle: Duration = .milliseconds(100)
    /// An interval's period.
    public var every: Duration = .seconds(1)
    /// The camera the settings go to, for a backend that drives several (`nil`: all).
    public var camera: String?
    /// A spin's step between frames: a program (argv) that turns the table, moves a
    /// light, pulses a GPIO line; it gets the next frame's place in its environment.
    public var command: [String] = []
    /// How long a spin's step may run before it is killed and the spin fails.
    public var stepTimeout: Duration = .seconds(30)
    /// A bulb's exposure: how long the shutter is held open, on the monotonic clock.
    public var exposure: Duration = .seconds(1)
    /// Another plan (a bracket, a focus stack or a bulb) shot at each of this one's frames
    /// instead of one frame: a bracket at each angle of a spin, a focus stack at each
    /// moment of an interval.
    public var each: String?

    public init(name: String, kind: Kind, frames: Int) {
        self.name = name
        self.kind = kind
        self.frames = frames
    }

    /// The setting a kind steps unless the plan names one.
    var defaultSetting: String? {
        switch kind {
        case .bracket: "shutterspeed"
        case .focusStack: "focusdistance"
        case .interval, .spin, .bulb: nil
        }
    }

    /// Reads the `sequences:` map of a config.
    static func plans(_ top: PluginOptions) throws -> [String: SequencePlan] {
        guard let node = try top.node("sequences") else { return [:] }
        guard case .mapping(let entries) = node.value else {
            throw ConfigError("config: 'sequences' must be a map of names to plans (stack: {kind: focus-stack, frames: 9})", at: node.location)
        }
        var plans: [String: SequencePlan] = [:]
        var eachLocations: [String: SourceLocation] = [:]
        for entry in entries {
            let name = entry.key
            guard !name.isEmpty, name.utf8.count <= 64, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                throw ConfigError("config: sequence name '\(LogText.escaped(name))' must be letters, digits, - and _ (at most 64 bytes)", at: entry.keyLocation)
            }
            let block = try top.nested(entry.value, owner: "sequence '\(name)'")
            let kinds = Kind.allCases.map(\.rawValue)
            guard let kindName = try block.string("kind") else {
                throw block.error("'kind' is required: \(kinds.joined(separator: ", "))")
            }
            guard let kind = Kind(rawValue: kindName) else {
                let suggestion = closestMatch(to: kindName, in: kinds).map { "; did you mean '\($0)'?" } ?? ""
                throw block.error("unknown kind '\(LogText.escaped(kindName))'\(suggestion) The kinds: \(kinds.joined(separator: ", "))", key: "kind")
            }
            var plan = SequencePlan(name: name, kind: kind, frames: try block.int("frames", default: kind == .bracket ? 3 : kind == .spin ? 36 : kind == .bulb ? 1 : 9, in: 1...10_000))
            plan.setting = try block.string("setting")
            plan.camera = try block.string("camera")
            switch kind {
            case .bracket:
                plan.ev = try block.double("ev", default: 1, in: 0.1...5)
            case .focusStack:
                plan.step = try block.int("step", default: 1, in: 1...10_000)
                plan.from = try block.double("from")
                plan.farToNear = try block.choice("direction", from: ["near-to-far", "far-to-near"], default: "near-to-far") == "far-to-near"
                plan.settle = try block.duration("settle", default: plan.settle)
            case .interval:
                plan.every = try block.duration("every", default: plan.every)
                guard plan.every > .zero else { throw block.error("'every' must be longer than 0", key: "every") }
            case .spin:
                plan.command = try block.stringList("command")
                guard !plan.command.isEmpty else {
                    throw block.error("'command' is required: the program run between frames, as a list (command: [turntable, step, \"10\"])")
                }
                plan.settle = try block.duration("settle", default: .zero)
                plan.stepTimeout = try block.duration("timeout", default: plan.stepTimeout)
            case .bulb:
                guard block.contains("exposure") else {
                    throw block.error("'exposure' is required: how long the shutter stays open, such as 30s or 2m")
                }
                plan.exposure = try block.duration("exposure", default: plan.exposure)
                guard plan.exposure >= .milliseconds(1), plan.exposure <= .seconds(12 * 3600) else {
                    throw block.error("'exposure' must be between 1ms and 12h", key: "exposure")
                }
                guard !block.contains("each") else {
                    throw block.error("a bulb takes no 'each': an interval or a spin can shoot a bulb at each of its frames (each: \(name))", key: "each")
                }
            }
            if let inner = try block.string("each") { plan.each = inner }
            block.recordUnknownKeys()
            plans[name] = plan
            eachLocations[name] = block.location(of: "each")
        }
        // A plan shot at each frame must be one of settings alone, planned here, not itself combined.
        for (name, plan) in plans {
            guard let innerName = plan.each else { continue }
            let location = eachLocations[name] ?? node.location
            guard let inner = plans[innerName], innerName != name else {
                let known = plans.keys.filter { $0 != name }.sorted()
                throw ConfigError("config: sequence '\(name)': 'each' names no other sequence ('\(LogText.escaped(innerName))'); the sequences are: \(known.joined(separator: ", "))", at: location)
            }
            guard [.bracket, .focusStack, .bulb].contains(inner.kind), inner.each == nil else {
                throw ConfigError("config: sequence '\(name)': 'each' must name a bracket, a focus stack or a bulb that has no 'each' of its own; '\(innerName)' is \(inner.each == nil ? inner.kind.withArticle : "combined")", at: location)
            }
            if let outerKey = plan.setting ?? plan.defaultSetting, outerKey == (inner.setting ?? inner.defaultSetting) {
                throw ConfigError("config: sequence '\(name)': it and '\(innerName)' both step '\(outerKey)'; a combined sequence steps two settings", at: location)
            }
        }
        return plans
    }
}

/// One frame of a sequence as planned against the camera's settings: what to change
/// before it, and its place.
struct SequenceStep: Sendable {
    var changes: [SettingChange]
    var frame: SequenceFrame
}

extension SequencePlan {
    /// The frames against the camera's `current` setting (nil for an interval), and the
    /// change that puts the camera back as it was found.
    func steps(_ current: CameraSetting?) throws(ShutterError) -> (steps: [SequenceStep], restore: [SettingChange]) {
        func frame(_ index: Int, value: String? = nil, ev: Double? = nil) -> SequenceFrame {
            SequenceFrame(name: name, kind: kind.words, index: index + 1, count: frames, setting: current?.key, value: value, ev: ev)
        }
        guard kind != .interval else { return ((0..<frames).map { SequenceStep(changes: [], frame: frame($0)) }, []) }
        if kind == .bulb {
            // Each frame held open as long: its place says for how long.
            let steps = (0..<frames).map { index in
                var place = frame(index, value: formatDuration(exposure))
                place.setting = "bulb"
                return SequenceStep(changes: [], frame: place)
            }
            return (steps, [])
        }
        if kind == .spin {
            // The angle each frame is taken at, the table turned a step between frames.
            let steps = (0..<frames).map { index in
                var place = frame(index, value: Self.angle(index, of: frames))
                place.setting = "angle"
                return SequenceStep(changes: [], frame: place)
            }
            return (steps, [])
        }
        guard let current else { throw ShutterError(.invalidConfiguration, "sequence '\(name)': the camera has no setting to step") }
        let restore = [SettingChange(key: current.key, value: current.value)]
        switch (kind, current.kind) {
        case (.focusStack, .range):
            // A relative drive: a step between frames, and back at the end.
            let step = Double(self.step) * (farToNear ? -1 : 1)
            let steps = (0..<frames).map { index in
                SequenceStep(changes: index == 0 ? [] : [SettingChange(key: current.key, value: Self.number(step))], frame: frame(index, value: Self.number(step * Double(index))))
            }
            return (steps, frames > 1 ? [SettingChange(key: current.key, value: Self.number(-step * Double(frames - 1)))] : [])
        case (.focusStack, .menu):
            let positions = current.choices.compactMap { choice in SettingText.number(in: choice).map { (choice, $0) } }.sorted { $0.1 < $1.1 }
            guard positions.count > 1 else {
                throw ShutterError(.invalidConfiguration, "sequence '\(name)': '\(current.key)' has no positions to step through (\(current.choices.joined(separator: ", ")))")
            }
            let start = from ?? SettingText.number(in: current.value) ?? positions[0].1
            var index = positions.indices.min { abs(positions[$0].1 - start) < abs(positions[$1].1 - start) }!
            let direction = farToNear ? -1 : 1
            let last = index + direction * step * (frames - 1)
            guard positions.indices.contains(last) else {
                throw ShutterError(.invalidConfiguration, "sequence '\(name)': \(frames) frames \(step) position(s) apart from \(positions[index].0) go past the lens's range (\(positions.first!.0) to \(positions.last!.0))",
                                   fix: "fewer frames, a smaller 'step', or another 'from'")
            }
            var steps: [SequenceStep] = []
            for frameIndex in 0..<frames {
                steps.append(SequenceStep(changes: [SettingChange(key: current.key, value: positions[index].0)], frame: frame(frameIndex, value: positions[index].0)))
                index += direction * step
            }
            return (steps, restore)
        case (.bracket, .menu):
            guard let base = Self.exposure(current.value, of: current.key) else {
                throw ShutterError(.invalidConfiguration, "sequence '\(name)': '\(current.key)' is '\(current.value)', not an exposure a bracket can step",
                                   fix: "bracket shutterspeed, iso or f-number, and set a value (not auto) first")
            }
            let choices = current.choices.compactMap { choice in Self.exposure(choice, of: current.key).map { (choice, $0) } }
            // 0, −1, +1, −2, +2 …, as cameras order a bracket.
            let offsets = (0..<frames).map { index -> Double in
                let size = Double((index + 1) / 2) * ev
                return index % 2 == 1 ? -size : size
            }
            var used: Set<String> = []
            let steps = offsets.enumerated().map { index, offset -> SequenceStep in
                // The nearest value on the offset's side of the base, not taken by a frame
                // before: a camera whose values are further apart than the step still
                // brackets, by the steps it has.
                let side = offset == 0 ? choices : choices.filter { ($0.1 - base) * offset > 0.01 }
                let fresh = side.filter { !used.contains($0.0) }
                let nearest = (fresh.isEmpty ? (side.isEmpty ? choices : side) : fresh).min { abs($0.1 - (base + offset)) < abs($1.1 - (base + offset)) }!
                used.insert(nearest.0)
                return SequenceStep(changes: [SettingChange(key: current.key, value: nearest.0)], frame: frame(index, value: nearest.0, ev: ((nearest.1 - base) * 100).rounded() / 100))
            }
            return (steps, restore)
        default:
            throw ShutterError(.invalidConfiguration, "sequence '\(name)': '\(current.key)' is a \(current.kind.rawValue) setting, which a \(kind.words) cannot step",
                               fix: kind == .bracket ? "bracket a menu setting: shutterspeed, iso or f-number" : "use focusdistance (positions) or manualfocusdrive (steps)")
        }
    }

    /// A value's exposure in EV, more exposure higher: a shutter speed's log2 of seconds,
    /// an ISO's log2, an f-number's −2·log2.
    static func exposure(_ value: String, of key: String) -> Double? {
        let lowered = key.lowercased()
        guard let number = SettingText.number(in: value), number > 0 else { return nil }
        if lowered.contains("shutter") || lowered.contains("exposuretime") { return log2(number) }
        if lowered.contains("iso") { return log2(number) }
        if lowered.contains("f-number") || lowered.contains("aperture") || lowered.contains("fnumber") { return -2 * log2(number) }
        return nil
    }

    /// Frame `index`'s angle on a turn of `frames`, in degrees ("0", "10", "22.5").
    static func angle(_ index: Int, of frames: Int) -> String {
        number((Double(index) * 360 / Double(max(1, frames)) * 10).rounded() / 10)
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
