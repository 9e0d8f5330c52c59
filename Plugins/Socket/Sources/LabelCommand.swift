import ShutterPipeKit
import ShutterPipeSupport

/// `shutterpipe label ORDER-1234`: the session label of a running session, through its
/// socket trigger.
struct LabelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "label", abstract: "set (or, with \"\", clear) the session label of a running session: {label} in the next shots' names",
        discussion: """
        Sends the label to a running `shutterpipe run` that has a socket trigger. It takes
        its turn among the session's events: the shots asked for after it carry it
        ({label} in file names, the catalogue, the sidecars) until another label replaces
        it. Prints the label now in force; exits 0 when it was taken, 1 otherwise.
        """)

    @Argument(valueName: "TEXT", help: "the label: an order number, a subject's code; \"\" clears it")
    var text: String

    @Option(valueName: "PATH", help: "the session's socket")
    var socket: String = SocketProtocol.defaultPath

    @Option(valueName: "DURATION", help: "how long to wait for the answer")
    var timeout: Duration = .seconds(30)

    func run(_ context: CommandContext) async throws -> Int32 {
        guard text.utf8.count <= LabelRequest.maximumLength, !text.contains("\n") else {
            throw UsageError("a label is one line of at most \(LabelRequest.maximumLength) bytes of UTF-8")
        }
        let outcome = await SocketClient.ask(SocketRequest(label: text), to: socket, timeout: timeout, name: "label")
        switch outcome {
        case .success(let reply):
            if let error = reply.error {
                context.errors.printLine("shutterpipe label: the session refused the request: \(error)")
                return CommandContext.failure
            }
            guard reply.isSuccess else {
                context.errors.printLine("shutterpipe label: \(reply.summary ?? reply.message ?? "refused")")
                return CommandContext.failure
            }
            context.output.printLine(reply.summary ?? "label")
            return CommandContext.success
        case .failure(let error):
            context.errors.printLine("shutterpipe label: \(error)")
            return CommandContext.failure
        }
    }
}
