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
///   PlayPause: sequence stack   # a trigger that starts sequences (mpris, evdev)
/// ```
///
/// A `map:` in the config replaces the trigger's defaults as a whole, so what the config
/// says is all there is. Names that are not mapped (or mapped to `ignore`) are disabled;
/// triggers that can tell their device so (MPRIS `CanGoNext`) do.
public struct EventMap: Sendable, Equatable {
    /// The mapping, by the trigger's names.
    public private(set) var events: [String: ShutterEvent]
    /// The names that start a sequence the config plans (`Next: sequence stack`), with the
    /// sequence's name. A trigger sends a ``SequenceRequest`` for them; the coordinator
    /// refuses a name the config does not plan, with the names it does.
    public private(set) var sequences: [String: String] = [:]

    /// A map from `defaults`.
    public init(_ defaults: [String: ShutterEvent]) {
        events = defaults
    }

    /// Reads `key` (default `map`) from `options`, or keeps `defaults` when absent.
    /// `names` normalises and checks a name (returning `nil` for one the trigger does not
    /// know); `known` lists the valid names for the error message.
    /// `startsSequences`: the trigger sends a ``SequenceRequest`` for a name mapped to
    /// `sequence NAME` (``sequence(for:)``); a trigger that does not is refused such a map
    /// at load, never left to ignore it.
    public init(_ options: PluginOptions, key: String = "map", defaults: [String: ShutterEvent],
                known: [String], startsSequences: Bool = false, normalize: @Sendable (String) -> String? = { $0 }) throws {
        events = defaults
        guard options.contains(key) else { return }
        var mapped: [String: ShutterEvent] = [:]
        for (name, value, location) in try options.stringMap(key) {
            guard let normalized = normalize(name) else {
                var message = "\(options.owner): '\(key)' has an unknown name '\(name)'"
                if let suggestion = closestMatch(to: name, in: known) { message += "; did you mean '\(suggestion)'?" }
                throw ConfigError(message + "; known: \(known.joined(separator: ", "))", at: location)
            }
            let words = value.split(separator: " ", omittingEmptySubsequences: true)
            if words.first?.lowercased() == "sequence" {
                guard startsSequences else {
                    throw ConfigError("\(options.owner): '\(key).\(name)': this trigger does not start sequences from its map; map it to enter, capture, exit or ignore "
                                      + "(sequences start from an earbud's or a remote's map, stdin's 'sequence NAME', the socket's and MQTT's sequence requests, or the page)", at: location)
                }
                guard words.count == 2 else {
                    throw ConfigError("\(options.owner): '\(key).\(name)' names one sequence of the config's 'sequences:', such as 'sequence stack'; got '\(value)'", at: location)
                }
                sequences[normalized] = String(words[1])
                continue
            }
            switch value.lowercased() {
            case "enter": mapped[normalized] = .enter
            case "capture": mapped[normalized] = .capture
            case "exit": mapped[normalized] = .exit
            case "ignore": break
            default:
                throw ConfigError("\(options.owner): '\(key).\(name)' must be enter, capture, exit\(startsSequences ? ", ignore or 'sequence NAME'" : " or ignore"); got '\(value)'", at: location)
            }
        }
        events = mapped
    }

    /// The sequence a name starts, or `nil`.
    public func sequence(for name: String) -> String? { sequences[name] }

    /// The event for a name, or `nil` when the name is disabled.
    public func event(for name: String) -> ShutterEvent? { events[name] }

    /// Whether any name maps to `event`.
    public func maps(to event: ShutterEvent) -> Bool { events.values.contains(event) }

    /// Whether `event` is the only event the map produces (so a single-button device can
    /// fire at once, with no wait for a double tap).
    public var onlyCaptures: Bool { sequences.isEmpty && !events.isEmpty && events.values.allSatisfy { $0 == .capture } }
}
