import ShutterPipeKit
import ShutterPipeSupport

/// `shutterpipe trigger capture`: one event to a running session's socket trigger.
struct TriggerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trigger", abstract: "send enter, capture or exit to a running session's socket trigger",
        discussion: """
        Sends one event to a running `shutterpipe run` that has a socket trigger, waits for
        the state that answers it, and prints it as one line (as the stdin trigger does).
        Exits 0 only on success: photoSuccess for capture, enteredPhotoMode for enter, a
        normal exit for exit; 1 otherwise, or when no session listens.
        """)

    @Argument(valueName: "EVENT", help: "enter, capture or exit, or a name the session's socket trigger maps (its map:)")
    var event: String

    @Option(valueName: "PATH", help: "the session's socket")
    var socket: String = SocketProtocol.defaultPath

    @Option(valueName: "DURATION", help: "how long to wait for the answer")
    var timeout: Duration = .seconds(90)

    func run(_ context: CommandContext) async throws -> Int32 {
        // Names are the session's to judge: its socket trigger may map aliases (shoot: capture).
        guard !event.isEmpty, event.utf8.count <= 256 else {
            throw UsageError("give an event: enter, capture or exit, or a name the session's map: knows")
        }
        let outcome = await SocketClient.ask(SocketRequest(event: event), to: socket, timeout: timeout, name: "trigger")
        switch outcome {
        case .success(let reply):
            if let error = reply.error {
                context.errors.printLine("shutterpipe trigger: the session refused the request: \(error)")
                return CommandContext.failure
            }
            if reply.event == ShutterEvent.unknown.rawValue {
                context.errors.printLine("shutterpipe trigger: the session does not know '\(event)': its socket trigger takes enter, capture, exit and the names of its map:")
                return CommandContext.failure
            }
            context.output.printLine(reply.summary ?? "\(reply)")
            return reply.isSuccess ? CommandContext.success : CommandContext.failure
        case .failure(let error):
            context.errors.printLine("shutterpipe trigger: \(error)")
            return CommandContext.failure
        }
    }
}
