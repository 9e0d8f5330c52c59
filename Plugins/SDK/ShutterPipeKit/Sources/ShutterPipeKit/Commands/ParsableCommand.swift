/// A `shutterpipe` subcommand: the host's own (`run`, `validate`) or one a plugin
/// contributes through ``PluginRegistry/registerCommand(_:)`` (`cameras`, `trigger`).
///
/// In the shape of swift-argument-parser: a command is a type that declares its options
/// once, as properties with their help beside them, and the host generates the usage,
/// the help and the errors from those declarations.
///
/// ```swift
/// struct CamerasCommand: ParsableCommand {
///     static let configuration = CommandConfiguration(
///         commandName: "cameras", abstract: "list the cameras libgphoto2 detects")
///
///     @Option(valueName: "PORT", help: "also open the camera at this port")
///     var port: [String] = []
///
///     func run(_ context: CommandContext) async throws -> Int32 {
///         context.output.printLine("…")
///         return CommandContext.success
///     }
/// }
/// ```
///
/// ## Contract
/// - `init()` makes the command with every default; the host fills in what the command
///   line gave, then calls ``run(_:)`` once.
/// - Property names become option names: `logFormat` is `--log-format`.
/// - Throw ``UsageError`` for a mistake in the arguments: the host prints it with the
///   command's usage and exits 2. Return ``CommandContext/success`` or
///   ``CommandContext/failure`` otherwise.
/// - Print through ``CommandContext/output`` and ``CommandContext/errors``.
public protocol ParsableCommand: Sendable {
    /// The command's name and help.
    static var configuration: CommandConfiguration { get }

    /// The command with every default.
    init()

    /// Runs the command; returns the process's exit code.
    func run(_ context: CommandContext) async throws -> Int32
}

/// A command's name and the help text the host shows for it.
public struct CommandConfiguration: Sendable {
    /// The word that selects it: `shutterpipe cameras`.
    public var commandName: String
    /// One line for the list of commands.
    public var abstract: String
    /// Paragraphs for the command's own help, after its usage.
    public var discussion: String

    /// Creates a configuration.
    public init(commandName: String, abstract: String, discussion: String = "") {
        self.commandName = commandName
        self.abstract = abstract
        self.discussion = discussion
    }
}

/// What a running command gets from the host.
public struct CommandContext: Sendable {
    /// Exit code: the command did its job.
    public static let success: Int32 = 0
    /// Exit code: the command could not do its job (it says why on ``errors``).
    public static let failure: Int32 = 1

    /// Standard output, for results.
    public var output: Console
    /// Standard error, for problems.
    public var errors: Console
    /// The plugin types and commands known to this run.
    public var registry: PluginRegistry

    /// Creates a context.
    public init(output: Console, errors: Console, registry: PluginRegistry) {
        self.output = output
        self.errors = errors
        self.registry = registry
    }
}

/// A mistake on the command line. The host prints it with the command's usage and
/// exits 2.
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, and what would be right.
    public var description: String

    /// Creates an error.
    public init(_ description: String) {
        self.description = description
    }
}
