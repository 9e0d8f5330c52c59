import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// `shutterpipe set iso=400 shutterspeed=1/200`: changes camera settings in a running
/// session, between its shots, through its socket trigger.
struct SetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "change camera settings in a running session (iso=400 shutterspeed=1/200)",
        discussion: """
        Sends the changes to a running `shutterpipe run` that has a socket trigger. The
        session applies them in their turn among its events, never during a shot, all or
        none: each value is checked against the camera's own choices first (1/200 matches
        0.0050s, 8 matches f/8). Prints each setting as the camera reads it back and exits 0;
        when one is refused, nothing changes, the reason and the choices go to standard
        error, and it exits 1. The changes last for the session: the camera keeps them
        across reconnections. Names are those of `shutterpipe camera settings`, and iso,
        shutterspeed, aperture, imageformat.
        """)

    @Argument(valueName: "KEY=VALUE", help: "a setting and its new value, such as iso=400")
    var changes: [String] = []

    @OptionGroup var session: SettingsSessionOptions

    func run(_ context: CommandContext) async throws -> Int32 {
        guard !changes.isEmpty else { throw UsageError("give at least one KEY=VALUE, such as iso=400") }
        var parsed: [SettingChange] = []
        for text in changes {
            guard let change = SettingChange(parsing: text) else {
                throw UsageError("'\(text)' is not KEY=VALUE; write it as iso=400 or shutterspeed=1/200")
            }
            parsed.append(change)
        }
        return await session.ask(SocketRequest(set: parsed, camera: session.camera), command: "set", context: context)
    }
}

/// `shutterpipe get [iso …]`: a running session's camera settings, with their choices.
struct GetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "read camera settings from a running session, with their choices",
        discussion: """
        Asks a running `shutterpipe run` that has a socket trigger for its camera's settings
        (every one, or those named), read between its shots: the way to see them while the
        session holds the camera (`shutterpipe camera settings` opens a camera itself).
        """)

    @Argument(valueName: "KEY", help: "only these settings (iso, shutterspeed, aperture, …)")
    var keys: [String] = []

    @OptionGroup var session: SettingsSessionOptions

    func run(_ context: CommandContext) async throws -> Int32 {
        await session.ask(SocketRequest(get: keys, camera: session.camera), command: "get", context: context)
    }
}

/// What `set` and `get` share: one request over the socket, and the answer printed.
enum SettingsClient {
    static func ask(_ request: SocketRequest, command: String, socket: String, timeout: Duration, json: Bool,
                    context: CommandContext) async -> Int32 {
        let outcome = await SocketClient.ask(request, to: socket, timeout: timeout, name: command)
        let reply: SocketReply
        switch outcome {
        case .success(let answer): reply = answer
        case .failure(let error):
            context.errors.printLine("shutterpipe \(command): \(error)")
            return CommandContext.failure
        }
        if let error = reply.error {
            context.errors.printLine("shutterpipe \(command): the session refused the request: \(error)")
            return CommandContext.failure
        }
        if json {
            context.output.printLine(String(decoding: SocketProtocol.line(reply).dropLast(), as: UTF8.self))
            return reply.isSuccess ? CommandContext.success : CommandContext.failure
        }
        let settings = reply.settings ?? []
        if let message = reply.message {
            context.errors.printLine("shutterpipe \(command): \(reply.cause.map { "\($0): " } ?? "")\(message)")
            // What each setting named may be set to, where the camera told.
            for line in formatColumns(settings.map { [name($0), "now \($0.value)", $0.allowedValues] }, indent: "  ") {
                context.errors.printLine(line)
            }
            return CommandContext.failure
        }
        if command == "set" {
            for line in formatColumns(settings.map { [name($0), "= \($0.value)"] }) { context.output.printLine(line) }
        } else {
            for line in formatColumns(settings.map { [name($0), $0.value.isEmpty ? "-" : $0.value, $0.kind.rawValue, $0.allowedValues] }) {
                context.output.printLine(line)
            }
        }
        return CommandContext.success
    }

    /// `iso`, or `left.iso` for one camera of several.
    static func name(_ setting: CameraSetting) -> String {
        (setting.camera.map { "\($0)." } ?? "") + setting.key
    }
}

/// What `get` and `set` both take: the session's socket, how long to wait, which camera,
/// and the answer as JSON. Declared once (an `@OptionGroup`).
struct SettingsSessionOptions: ParsableArguments {
    @Option(valueName: "NAME", help: "only this camera of the session (its name under cameras:)")
    var camera: String?

    @Option(valueName: "PATH", help: "the session's socket")
    var socket: String = SocketProtocol.defaultPath

    @Option(valueName: "DURATION", help: "how long to wait for the answer")
    var timeout: Duration = .seconds(30)

    @Flag(help: "print the answer as JSON")
    var json = false

    /// Sends `request` to the session and prints its answer (``SettingsClient``).
    func ask(_ request: SocketRequest, command: String, context: CommandContext) async -> Int32 {
        await SettingsClient.ask(request, command: command, socket: socket, timeout: timeout, json: json, context: context)
    }
}
