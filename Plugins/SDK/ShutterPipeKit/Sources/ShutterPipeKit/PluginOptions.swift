import Foundation
import Synchronization

/// One plugin's part of the config, with typed accessors that produce precise errors.
///
/// A plugin factory reads every option it knows through these accessors; each accessor
/// records the key as known. After the factory returns, the pipeline calls
/// ``rejectUnknownKeys()``: any key nobody asked for is an error with a did-you-mean
/// suggestion drawn from the keys that were asked for. So a plugin never writes a schema,
/// and a typo in a config never passes silently.
///
/// Every error names the file, line and column of the offending value and the plugin
/// ("sink 'files'").
///
/// ## Every mistake in one pass
/// A user with six typos should see six errors, not fix them over four runs. So:
/// - An accessor that has a default (`int(_:default:)`, `bool`, `duration`, `choice`,
///   `stringList`, …) records a bad value and returns the default, and the factory reads
///   on. Accessors without a default (`int(_:)`, `string(_:)`, `requiredString`,
///   `section`) throw, as there is nothing to return.
/// - ``rejectUnknownKeys()`` records every unknown key, not the first. On the plugin's
///   own options (the pipeline calls it after the factory) it then throws everything
///   recorded: one ``ConfigError``, or ``ConfigErrors`` in file order. On a nested map
///   (``section(_:)``, ``nested(_:owner:)``) it only records: the plugin's options throw
///   them all together.
/// - A factory that throws has its error reported with what was recorded before it.
public final class PluginOptions: Sendable {
    /// The map node these options come from.
    public let node: ConfigNode
    /// Who owns these options, for messages: "sink 'files'", "the top level".
    public let owner: String
    let entries: [ConfigEntry]
    let known: Mutex<[String]>
    /// The mistakes recorded so far, shared with nested maps.
    let recorded: MistakeRecord
    /// Whether these are a plugin's (or the config's) own options rather than a nested map.
    let isRoot: Bool

    /// Wraps a map node. `handledKeys` are keys someone else already handled (`type`,
    /// `name`), which count as known.
    public convenience init(_ node: ConfigNode, owner: String, handledKeys: [String] = []) throws {
        try self.init(node, owner: owner, handledKeys: handledKeys, recorded: MistakeRecord(), isRoot: true)
    }

    private init(_ node: ConfigNode, owner: String, handledKeys: [String], recorded: MistakeRecord, isRoot: Bool) throws {
        guard case .mapping(let entries) = node.value else {
            throw ConfigError("\(owner) must be a map of options, got \(node.kindDescription)", at: node.location)
        }
        self.node = node
        self.owner = owner
        self.entries = entries
        self.known = Mutex(handledKeys)
        self.recorded = recorded
        self.isRoot = isRoot
    }

    /// Options of a map inside these (an entry of a list of maps, say), whose mistakes are
    /// reported with these options' own.
    public func nested(_ node: ConfigNode, owner: String) throws -> PluginOptions {
        try PluginOptions(node, owner: owner, handledKeys: [], recorded: recorded, isRoot: false)
    }

    /// The keys present, in document order.
    public var keys: [String] { entries.map(\.key) }

    /// Whether `key` is present (and not null).
    public func contains(_ key: String) -> Bool {
        markKnown(key)
        return entry(key).map { !$0.value.isNull } ?? false
    }

    /// Where the value of `key` is, or the map itself when the key is absent.
    public func location(of key: String) -> SourceLocation {
        entry(key)?.value.location ?? node.location
    }

    /// An error about `key` (or the whole map, for `nil`), located at its value.
    public func error(_ message: String, key: String? = nil) -> ConfigError {
        ConfigError("\(owner): \(message)", at: key.map(location(of:)) ?? node.location)
    }

    // MARK: Scalars

    /// The text of `key`, or `nil` when it is absent or null.
    public func string(_ key: String) throws -> String? {
        guard let value = try scalar(key, expecting: "a string") else { return nil }
        return value.text
    }

    /// The text of `key`, or `defaultValue`.
    public func string(_ key: String, default defaultValue: String) throws -> String {
        recording(defaultValue) { try string(key) ?? defaultValue }
    }

    /// The text of `key`, which must be present.
    public func requiredString(_ key: String) throws -> String {
        guard let value = try string(key) else { throw missing(key, expecting: "a string") }
        return value
    }

    /// One of `choices`, or `defaultValue`.
    public func choice(_ key: String, from choices: [String], default defaultValue: String) throws -> String {
        recording(defaultValue) {
            guard let value = try scalar(key, expecting: "one of \(choices.joined(separator: ", "))") else { return defaultValue }
            guard choices.contains(value.text) else {
                throw ConfigError("\(owner): '\(key)' must be one of \(choices.joined(separator: ", ")); got '\(value.text)'", at: value.location)
            }
            return value.text
        }
    }

    /// An integer, or `nil` when absent.
    public func int(_ key: String, in range: ClosedRange<Int>? = nil) throws -> Int? {
        guard let value = try scalar(key, expecting: "an integer") else { return nil }
        guard let number = Int(value.text.replacingOccurrences(of: "_", with: "")) else {
            throw ConfigError("\(owner): '\(key)' must be an integer; got '\(value.text)'", at: value.location)
        }
        if let range, !range.contains(number) {
            throw ConfigError("\(owner): '\(key)' must be between \(range.lowerBound) and \(range.upperBound); got \(number)", at: value.location)
        }
        return number
    }

    /// An integer, or `defaultValue`.
    public func int(_ key: String, default defaultValue: Int, in range: ClosedRange<Int>? = nil) throws -> Int {
        recording(defaultValue) { try int(key, in: range) ?? defaultValue }
    }

    /// A number, or `nil` when absent.
    public func double(_ key: String, in range: ClosedRange<Double>? = nil) throws -> Double? {
        guard let value = try scalar(key, expecting: "a number") else { return nil }
        guard let number = Double(value.text), number.isFinite else {
            throw ConfigError("\(owner): '\(key)' must be a number; got '\(value.text)'", at: value.location)
        }
        if let range, !range.contains(number) {
            throw ConfigError("\(owner): '\(key)' must be between \(range.lowerBound) and \(range.upperBound); got \(value.text)", at: value.location)
        }
        return number
    }

    /// A number, or `defaultValue`.
    public func double(_ key: String, default defaultValue: Double, in range: ClosedRange<Double>? = nil) throws -> Double {
        recording(defaultValue) { try double(key, in: range) ?? defaultValue }
    }

    /// `true`/`false` (also `yes`/`no`, `on`/`off`), or `defaultValue`.
    public func bool(_ key: String, default defaultValue: Bool) throws -> Bool {
        recording(defaultValue) {
            guard let value = try scalar(key, expecting: "true or false") else { return defaultValue }
            switch value.text.lowercased() {
            case "true", "yes", "on": return true
            case "false", "no", "off": return false
            default:
                throw ConfigError("\(owner): '\(key)' must be true or false; got '\(value.text)'", at: value.location)
            }
        }
    }

    /// A duration: `250ms`, `2s`, `1.5s`, `2m`, `1h`, or a bare number of seconds.
    public func duration(_ key: String, default defaultValue: Duration) throws -> Duration {
        recording(defaultValue) {
            guard let value = try scalar(key, expecting: "a duration") else { return defaultValue }
            guard let duration = Self.parseDuration(value.text) else {
                throw ConfigError("\(owner): '\(key)' must be a duration such as 500ms, 2s or 1m (at most a year); got '\(value.text)'", at: value.location)
            }
            return duration
        }
    }

    /// A file system path with `~` expanded; relative paths stay relative to the working
    /// directory.
    public func path(_ key: String) throws -> String? {
        try string(key).map(Self.expandingTilde)
    }

    /// A path with `~` expanded, or `defaultValue` (also expanded).
    public func path(_ key: String, default defaultValue: String) throws -> String {
        recording(Self.expandingTilde(defaultValue)) { try path(key) ?? Self.expandingTilde(defaultValue) }
    }

    // MARK: Collections

    /// A list of strings; a single string counts as a list of one. Empty when absent (and
    /// when it is not a list of strings, which is recorded).
    public func stringList(_ key: String) throws -> [String] {
        recording([]) { try strings(key) }
    }

    private func strings(_ key: String) throws -> [String] {
        guard let node = try node(key) else { return [] }
        switch node.value {
        case .scalar(let text, _): return [text]
        case .sequence(let items):
            return try items.map { item in
                guard case .scalar(let text, _) = item.value, !item.isNull else {
                    throw ConfigError("\(owner): '\(key)' must be a list of strings; found \(item.kindDescription)", at: item.location)
                }
                return text
            }
        case .mapping:
            throw ConfigError("\(owner): '\(key)' must be a list of strings; got a map", at: node.location)
        }
    }

    /// A nested map of options, or `nil` when absent. The nested options check their own
    /// unknown keys when ``rejectUnknownKeys()`` is called on them.
    public func section(_ key: String) throws -> PluginOptions? {
        guard let node = try node(key) else { return nil }
        return try nested(node, owner: "\(owner) '\(key)'")
    }

    /// A map from strings to strings, in document order, with where each value is. Empty
    /// when absent (and when it is not such a map, which is recorded).
    public func stringMap(_ key: String) throws -> [(key: String, value: String, location: SourceLocation)] {
        recording([]) { try textMap(key) }
    }

    private func textMap(_ key: String) throws -> [(key: String, value: String, location: SourceLocation)] {
        guard let node = try node(key) else { return [] }
        guard case .mapping(let entries) = node.value else {
            throw ConfigError("\(owner): '\(key)' must be a map; got \(node.kindDescription)", at: node.location)
        }
        return try entries.map { entry in
            guard case .scalar(let text, _) = entry.value.value else {
                throw ConfigError("\(owner): '\(key).\(entry.key)' must be a string; got \(entry.value.kindDescription)", at: entry.value.location)
            }
            return (entry.key, entry.value.isNull ? "" : text, entry.value.location)
        }
    }

    /// The raw node of `key`, or `nil` when absent or null; for shapes the other accessors
    /// do not cover.
    public func node(_ key: String) throws -> ConfigNode? {
        markKnown(key)
        guard let entry = entry(key), !entry.value.isNull else { return nil }
        return entry.value
    }

    // MARK: Helpers

    /// Parses `250ms`, `2s`, `1.5s`, `2m`, `1h` or a bare number of seconds, up to a
    /// year (a longer one is a mistake, and would not fit a Duration in milliseconds).
    public static func parseDuration(_ text: String) -> Duration? {
        let text = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        var number = text
        var scale = 1.0
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            number = String(text.dropLast(suffix.count))
            scale = factor
            break
        }
        guard let value = Double(number.trimmingCharacters(in: .whitespaces)), value.isFinite, value >= 0,
              value * scale <= 366 * 86_400 else { return nil }
        return .milliseconds(Int64((value * scale * 1000).rounded()))
    }

    /// Expands a leading `~` or `~/` to the home directory.
    public static func expandingTilde(_ path: String) -> String {
        guard path == "~" || path.hasPrefix("~/") else { return path }
        let home = ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()
        return home + path.dropFirst()
    }

    /// Runs `read`; a ``ConfigError`` it throws is recorded and `fallback` returned.
    private func recording<Value>(_ fallback: Value, _ read: () throws -> Value) -> Value {
        do { return try read() } catch let error as ConfigError {
            recorded.add(error)
            return fallback
        } catch {
            recorded.add(self.error("\(error)"))
            return fallback
        }
    }

    private func entry(_ key: String) -> ConfigEntry? {
        entries.first { $0.key == key }
    }

    private func markKnown(_ key: String) {
        known.withLock { if !$0.contains(key) { $0.append(key) } }
    }

    private func missing(_ key: String, expecting: String) -> ConfigError {
        ConfigError("\(owner): missing key '\(key)' (\(expecting))", at: node.location)
    }

    private func scalar(_ key: String, expecting: String) throws -> (text: String, location: SourceLocation)? {
        guard let node = try node(key) else { return nil }
        guard case .scalar(let text, _) = node.value else {
            throw ConfigError("\(owner): '\(key)' must be \(expecting); got \(node.kindDescription)", at: node.location)
        }
        return (text, node.location)
    }
}
