import Foundation
import Synchronization

/// Mistakes: the keys nobody asked for (with the closest known key), the mistakes a plugin
/// records itself, and all of them thrown together with their lines.
extension PluginOptions {
    /// Records every key present that no accessor asked for, each suggesting the closest
    /// known key. On a plugin's own options, then throws every mistake recorded (its nested
    /// maps' too); on a nested map, only records them.
    public func rejectUnknownKeys() throws {
        recordUnknownKeys()
        if isRoot { try throwRecordedMistakes() }
    }

    /// Records every key present that no accessor asked for, and throws nothing.
    public func recordUnknownKeys() {
        let known = self.known.withLock { $0 }
        for entry in entries where !known.contains(entry.key) {
            var message = "\(owner): unknown key '\(entry.key)'"
            if let suggestion = closestMatch(to: entry.key, in: known) {
                message += "; did you mean '\(suggestion)'?"
            } else if !known.isEmpty {
                message += "; known keys: \(known.sorted().joined(separator: ", "))"
            }
            recorded.add(ConfigError(message, at: entry.keyLocation))
        }
    }

    /// Records a mistake a plugin found itself (a value no accessor can check), to be
    /// reported with the others, and lets the factory read on: use it where a default can
    /// stand in for the bad value; throw where nothing can.
    public func record(_ mistake: ConfigError) {
        recorded.add(mistake)
    }

    /// The mistakes recorded so far, here and in nested maps, in file order.
    public var recordedMistakes: [ConfigError] { recorded.all }

    /// Throws the mistakes recorded so far: nothing when there are none, one
    /// ``ConfigError``, or ``ConfigErrors``.
    public func throwRecordedMistakes() throws {
        try ConfigErrors.throwing(recorded.all)
    }
}

/// The mistakes recorded while options are read, shared by a plugin's options and the
/// maps nested in them.
final class MistakeRecord: Sendable {
    private let mistakes = Mutex<[ConfigError]>([])

    func add(_ error: ConfigError) {
        mistakes.withLock { if !$0.contains(error) { $0.append(error) } }
    }

    var all: [ConfigError] { mistakes.withLock { $0 } }
}
