#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import ShutterPipeKit
import ShutterPipeSupport

/// The `shutterpipe` command line: finds the command, parses its declared options, runs
/// it. The host's own commands are `run`, `validate` and `plugins`; plugins contribute
/// the others through the registry (`cameras` from gphoto2, `trigger` from socket), so
/// the host names no plugin.
///
/// Exit codes: 0 success; 1 the command could not do its job (a trigger failed to start,
/// no session answered); 2 a usage mistake; 3 an invalid config; 4 `run` ran, but some
/// events failed.
public enum ShutterPipeCLI {
    /// Exit code for success.
    public static let success: Int32 = 0
    /// Exit code when running failed.
    public static let runFailed: Int32 = 1
    /// Exit code for a command-line mistake.
    public static let usageError: Int32 = 2
    /// Exit code for an invalid config.
    public static let configError: Int32 = 3
    /// Exit code of `run` when the session ran but some events failed (a shot, an enter).
    public static let eventsFailed: Int32 = 4

    /// The host's own commands.
    static let hostCommands: [any ParsableCommand.Type] = [RunCommand.self, ValidateCommand.self, PluginsCommand.self, ShotsCommand.self]

    /// Runs the command line and returns the exit code.
    public static func main(_ arguments: [String]) async -> Int32 {
        // A camera or client that goes away mid-write must be an error to handle (EPIPE),
        // not a signal that kills the session without a word.
        signal(SIGPIPE, SIG_IGN)
        let registry = BuiltInPlugins.registry()
        let context = CommandContext(output: .standardOutput, errors: .standardError, registry: registry)
        guard let name = arguments.first else {
            context.errors.printLine(overview(registry))
            return usageError
        }
        let rest = Array(arguments.dropFirst())
        switch name {
        case "help", "-h", "--help":
            guard let topic = rest.first else { context.output.printLine(overview(registry)); return success }
            guard let command = command(named: topic, in: registry) else {
                context.errors.printLine("shutterpipe help: unknown command '\(topic)'\n\n" + overview(registry))
                return usageError
            }
            context.output.printLine(CommandHelp.help(command))
            return success
        case "--version", "version":
            context.output.printLine("shutterpipe \(ShutterPipeSDK.version) (plugin ABI \(ShutterPipeSDK.abi))")
            return success
        default:
            break
        }
        guard let type = command(named: name, in: registry) else {
            var message = "shutterpipe: unknown command '\(name)'"
            if let suggestion = closestMatch(to: name, in: commandNames(registry)) { message += "; did you mean '\(suggestion)'?" }
            context.errors.printLine(message + "\n\n" + overview(registry))
            return usageError
        }
        if CommandParser.asksForHelp(rest) {
            context.output.printLine(CommandHelp.help(type))
            return success
        }
        do {
            let command = try CommandParser.parse(type, rest)
            return try await command.run(context)
        } catch let error as UsageError {
            context.errors.printLine("shutterpipe \(name): \(error)\n\n\(CommandHelp.help(type))")
            return usageError
        } catch {
            context.errors.printLine("shutterpipe \(name): \(error)")
            return runFailed
        }
    }

    /// The command called `name`: the host's, a built-in plugin's, or (looked up only when
    /// neither has it) one from a plugin in $SHUTTERPIPE_PLUGIN_PATH.
    static func command(named name: String, in registry: PluginRegistry) -> (any ParsableCommand.Type)? {
        if let found = hostCommands.first(where: { $0.configuration.commandName == name }) { return found }
        if let found = registry.commands.first(where: { $0.name == name }) { return found.command }
        _ = PluginLoader.load(PluginLoader.defaultPaths(), into: registry)
        return registry.commands.first { $0.name == name }?.command
    }

    static func commandNames(_ registry: PluginRegistry) -> [String] {
        hostCommands.map { $0.configuration.commandName } + registry.commands.map(\.name) + ["help"]
    }

    /// What `shutterpipe --help` prints: every command with its one line, generated from
    /// the declarations.
    static func overview(_ registry: PluginRegistry) -> String {
        let commands = hostCommands.map { ($0.configuration.commandName, $0.configuration.abstract) }
            + registry.commands.map { ($0.name, $0.command.configuration.abstract + ($0.origin == .builtIn ? "" : " (from \($0.origin))")) }
            + [("help", "show help for a command: shutterpipe help COMMAND")]
        return """
        shutterpipe \(ShutterPipeSDK.version): tethered studio photography from a YAML pipeline

        Usage: shutterpipe <command> [options]

        Commands:
        \(CommandHelp.table(commands))

        Options:
        \(CommandHelp.table([("-h, --help", "show help"), ("--version", "print the version")]))

        Exit codes:
        \(CommandHelp.table([("0", "success"), ("1", "the command could not do its job (a trigger could not start, no session answered)"),
                             ("2", "a usage mistake"), ("3", "an invalid config"),
                             ("4", "run: the session ran, but events failed (the last log line gives the count)")]))

        See docs/config.md for the config file; `shutterpipe help COMMAND` for a command's options.
        """
    }
}
