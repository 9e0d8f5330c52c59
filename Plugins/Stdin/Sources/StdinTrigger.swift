#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// A trigger that reads `enter`, `capture` and `exit` lines from standard input and
/// prints every answering state as one line on standard output.
///
/// At most ``linesAhead`` lines are read ahead of their answers, so a script can pipe any
/// number of commands: the rest wait in the pipe, never refused by the coordinator's
/// bounded queue, while a burst still keeps the camera busy.
/// On a terminal an empty line (Enter alone) means capture. Anything else unrecognised
/// is `unknown`. End of input sends `exit` (unless the last event already was one, or
/// nothing was sent), then the trigger ends.
public struct StdinTrigger: TriggerSource {
    /// The type name in configs.
    public static let typeName = "stdin"

    /// How many lines may be waiting for their answers at once; well under the
    /// coordinator's default queue bound (16).
    public static let linesAhead = 4

    /// Registers the `stdin` type.
    public static func register(in registry: PluginRegistry) throws {
        try registry.registerTrigger(typeName, summary: "reads enter/capture/exit lines from standard input, prints each answer") { _, environment in
            StdinTrigger(console: environment.console)
        }
    }

    private let input: Int32
    private let interactive: Bool
    private let output: @Sendable (String) -> Void
    private let answered: AsyncStream<Void>
    private let answeredInput: AsyncStream<Void>.Continuation

    /// Reads standard input and prints answers on `console`.
    public init(console: Console = .standardOutput) {
        self.init(input: STDIN_FILENO, interactive: isatty(STDIN_FILENO) == 1, output: console.printLine)
    }

    /// Reads `input` (a file descriptor it does not close) and hands each answer line to
    /// `output`. `interactive` makes an empty line mean capture.
    public init(input: Int32, interactive: Bool, output: @escaping @Sendable (String) -> Void) {
        self.input = input
        self.interactive = interactive
        self.output = output
        (answered, answeredInput) = AsyncStream.makeStream(of: Void.self)
    }

    /// Delivers one event per line until end of input, then `exit`.
    public func run(delivering events: EventChannel) async throws {
        var lineNumber = 0
        var last: ShutterEvent?
        var answers = answered.makeAsyncIterator()
        var unanswered = 0
        for await line in LineReader.lines(from: input) {
            lineNumber += 1
            while unanswered >= Self.linesAhead {
                guard await answers.next() != nil else { return }  // cancelled
                unanswered -= 1
            }
            let event = event(for: line)
            events.send(event, origin: "line \(lineNumber)")
            unanswered += 1
            if event != .unknown { last = event }
        }
        // End of input means exit, unless the input just said so itself.
        if !Task.isCancelled && last != nil && last != .exit {
            events.send(.exit, origin: "end of input")
        }
    }

    /// Prints `answer` as one line: the state's name, then the stored paths or the cause.
    public func sync(_ answer: ShutterAnswer) async {
        output(answer.summary)
        answeredInput.yield()
    }

    func event(for line: String) -> ShutterEvent {
        let word = line.trimmingCharacters(in: .whitespacesAndNewlines)
        if word.isEmpty && interactive { return .capture }
        return ShutterEvent(parsing: word)
    }
}

/// Reads lines from a file descriptor on a thread of its own, so the blocking `read`
/// never occupies the cooperative pool.
enum LineReader {
    static func lines(from descriptor: Int32) -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .unbounded)
        let thread = Thread {
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                pending += buffer[0..<count]
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    continuation.yield(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
                if pending.count > 64 * 1024 { pending.removeAll() }  // a line that long is noise
            }
            if !pending.isEmpty { continuation.yield(String(decoding: pending, as: UTF8.self)) }
            continuation.finish()
        }
        thread.name = "shutterpipe stdin"
        thread.start()
        return stream
    }
}
