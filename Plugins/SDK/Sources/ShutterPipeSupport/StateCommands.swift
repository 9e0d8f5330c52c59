import Foundation
import ShutterPipeKit

/// A command to run for each synced state, such as a short sound through the headset:
/// the `feedback:` option triggers share.
///
/// ```yaml
/// feedback:
///   photoSuccess: [paplay, /usr/share/sounds/freedesktop/stereo/camera-shutter.oga]
///   photoFailed: [paplay, /usr/share/sounds/freedesktop/stereo/dialog-error.oga]
/// ```
///
/// Each command is an argv list, run without a shell, in the background: the answer never
/// waits for it. Its failure is logged.
public struct StateCommands: Sendable, Equatable {
    /// The argv per state.
    public private(set) var commands: [ShutterState: [String]] = [:]

    /// No commands.
    public init() {}

    /// Reads `key` (default `feedback`): a map from state names to argv lists.
    public init(_ options: PluginOptions, key: String = "feedback") throws {
        guard let node = try options.node(key) else { return }
        guard case .mapping(let entries) = node.value else {
            throw ConfigError("\(options.owner): '\(key)' must map states to commands, such as 'photoSuccess: [paplay, click.oga]'", at: node.location)
        }
        for entry in entries {
            guard let state = ShutterState(rawValue: entry.key) else {
                throw ConfigError("\(options.owner): '\(key)' has an unknown state '\(entry.key)'; states: \(ShutterState.allCases.map(\.rawValue).joined(separator: ", "))", at: entry.keyLocation)
            }
            let argv: [String]
            switch entry.value.value {
            case .sequence(let items):
                argv = items.compactMap { if case .scalar(let text, _) = $0.value { return text } else { return nil } }
            case .scalar(let text, _):
                argv = [text]
            case .mapping:
                argv = []
            }
            guard let program = argv.first, !program.isEmpty else {
                throw ConfigError("\(options.owner): '\(key).\(entry.key)' must be a command as a list, such as [paplay, click.oga]", at: entry.value.location)
            }
            commands[state] = argv
        }
    }

    /// Starts the command for `state`, if any, and returns at once. Its end is logged
    /// when it fails.
    public func run(for state: ShutterState, log: Logger) {
        guard let argv = commands[state] else { return }
        do {
            let child = try ChildProcess(argv)
            child.onExit { status in
                if !status.succeeded { log.warning("feedback command \(argv[0]) for \(state.rawValue) \(status)") }
            }
        } catch {
            log.warning("feedback command \(argv[0]) for \(state.rawValue) could not start: \(error.reason)")
        }
    }
}
