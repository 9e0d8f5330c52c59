import ShutterPipeKit
/// How a trigger's own commands or keys become shutter events: the `map:` option every
/// trigger shares.
///
/// ```yaml
/// map:
///   Play: capture
///   Pause: capture
///   Next: enter
///   Previous: exit
/// ```
///
/// A `map:` in the config replaces the trigger's defaults as a whole, so what the config
/// says is all there is. Names that are not mapped (or mapped to `ignore`) are disabled;
/// triggers that can tell their device so (MPRIS `CanGoNext`) do.
public struct EventMap: Sendable, Equatable {
    /// The mapping, by the trigger's names.
    public private(set) var events: [String: ShutterEvent]

    /// A map from `defaults`.
    public init(_ defaults: [String: ShutterEvent]) {
        events = defaults
    }

    /// Reads `key` (default `map`) from `options`, or keeps `defaults` when absent.
    /// `names` normalises and checks a name (returning `nil` for one the trigger does not
    /// know); `known` lists the valid names for the error message.
    public init(_ options: PluginOptions, key: String = "map", defaults: [String: ShutterEvent],
                known: [String], normalize: @Sendable (String) -> String? = { $0 }) throws {
        events = defaults
        guard options.contains(key) else { return }
        var mapped: [String: ShutterEvent] = [:]
        for (name, value, location) in try options.stringMap(key) {
            guard let normalized = normalize(name) else {
                var message = "\(options.owner): '\(key)' has an unknown name '\(name)'"
                if let suggestion = closestMatch(to: name, in: known) { message += "; did you mean '\(suggestion)'?" }
                throw ConfigError(message + "; known: \(known.joined(separator: ", "))", at: location)
            }
            switch value.lowercased() {
            case "enter": mapped[normalized] = .enter
            case "capture": mapped[normalized] = .capture
            case "exit": mapped[normalized] = .exit
            case "ignore": break
            default:
                throw ConfigError("\(options.owner): '\(key).\(name)' must be enter, capture, exit or ignore; got '\(value)'", at: location)
            }
        }
        events = mapped
    }

    /// The event for a name, or `nil` when the name is disabled.
    public func event(for name: String) -> ShutterEvent? { events[name] }

    /// Whether any name maps to `event`.
    public func maps(to event: ShutterEvent) -> Bool { events.values.contains(event) }

    /// Whether `event` is the only event the map produces (so a single-button device can
    /// fire at once, with no wait for a double tap).
    public var onlyCaptures: Bool { !events.isEmpty && events.values.allSatisfy { $0 == .capture } }
}
