#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import Synchronization
import ShutterPipeSupport

/// A trigger that reads `enter`, `capture` and `exit` lines from standard input and
/// prints every answering state as one line on standard output; `set iso=400 …` and
/// `get [iso …]` lines change or read the camera's settings between shots.
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
            StdinTrigger(console: environment.console, log: environment.log)
        }
    }

    private let input: Int32
    private let interactive: Bool
    private let log: Logger
    private let output: LineWriter

    /// Reads standard input and prints answers on `console`.
    public init(console: Console = .standardOutput) {
        self.init(input: STDIN_FILENO, interactive: isatty(STDIN_FILENO) == 1, output: console.printLine)
    }

    /// Reads standard input, prints answers on `console` and says on `log` when standard
    /// output is not being read.
    public init(console: Console, log: Logger) {
        self.init(input: STDIN_FILENO, interactive: isatty(STDIN_FILENO) == 1, output: console.printLine, log: log)
    }

    /// Reads `input` (a file descriptor it does not close) and hands each answer line to
    /// `output`. `interactive` makes an empty line mean capture.
    /// The lines are written on a thread of their own: an output nobody reads never
    /// holds a thread of the session.
    public init(input: Int32, interactive: Bool, output: @escaping @Sendable (String) -> Void, log: Logger = .discarding) {
        self.input = input
        self.interactive = interactive
        self.log = log
        self.output = LineWriter(label: "shutterpipe stdout", limit: 100, write: output) { dropped in
            log.warning("standard output is not being read: \(dropped) answer line(s) dropped so far; read it, or redirect it to a file")
        }
    }

    /// Delivers one event per line until end of input, then `exit`.
    public func run(delivering events: EventChannel) async throws {
        var lineNumber = 0
        var last: ShutterEvent?
        /// A sequence ran: the end of input leaves photo mode after it, as after a capture.
        var ranSequence = false
        // The lines still owed an answer, oldest first: each answer is printed when it
        // comes, and at most `linesAhead` lines are read ahead of their answers.
        var owed: [AnswerTurn] = []
        // Read a copy of the descriptor, not descriptor 0 itself: libgphoto2 2.5.30 closes
        // descriptor 0 when it drops a PTP/IP camera (its ptpip_disconnect closes a jpgfd
        // it never opened), which ended the session with an exit nobody sent.
        let copy = fcntl(input, F_DUPFD_CLOEXEC, 3)
        guard copy >= 0 else {
            throw ShutterError(.unexpected, "stdin trigger: cannot read standard input: \(String(cString: strerror(errno)))")
        }
        reading: for await line in LineReader.lines(from: copy, threadName: "shutterpipe stdin", closingAtEnd: true) {
            while owed.count >= Self.linesAhead {
                guard await owed.removeFirst().answered() else { break reading }  // cancelled: this line stays unread
            }
            lineNumber += 1
            // Each answer is printed in answer order (the coordinator's), with the others;
            // the line's turn ends with its answer.
            let turn = AnswerTurn()
            if let name = Self.sequence(in: line) {
                // Each frame is answered through sync, as a capture; the line's turn ends
                // with the sequence's own answer.
                events.send(SequenceRequest(name, origin: "line \(lineNumber)")) { [output] answer in
                    output.enqueue(answer.summary)
                    turn.end()
                }
                owed.append(turn)
                ranSequence = true
                continue
            }
            if let label = Self.label(in: line) {
                events.send(LabelRequest(label, origin: "line \(lineNumber)")) { [output] answer in
                    output.enqueue(answer.summary)
                    turn.end()
                }
                owed.append(turn)
                continue
            }
            if let request = settingsRequest(for: line, lineNumber: lineNumber) {
                switch request {
                case .success(let request):
                    events.send(request) { [output] answer in
                        output.enqueue(answer.summary)
                        turn.end()
                    }
                case .failure(let usage):
                    // Answered here, after the lines before it, so that answers keep the
                    // order of the lines.
                    while !owed.isEmpty {
                        guard await owed.removeFirst().answered() else { break reading }
                    }
                    log.warning("line \(lineNumber): \(usage.description)")
                    await output.write("settingsRefused invalidConfiguration: \(usage.description)")
                    continue
                }
                owed.append(turn)
                continue
            }
            let event = event(for: line)
            let origin: String
            if event == .unknown {
                origin = String(line.trimmingCharacters(in: .whitespacesAndNewlines).prefix(60))
                log.warning("line \(lineNumber) '\(origin)' is not a command: the commands are enter, capture and exit, one per line\(interactive ? " (Enter alone: capture)" : ""), set KEY=VALUE… or get [KEY…] for camera settings, label TEXT for the session label, and sequence NAME for a sequence the config plans")
            } else {
                origin = "line \(lineNumber)"
            }
            // Printed by sync (which the session waits for, so that the last answer is out
            // before it ends); the handle ends the line's turn.
            events.submit(TriggerEvent(event, origin: origin)).observe { _ in turn.end() }
            owed.append(turn)
            if event != .unknown { last = event }
        }
        if Task.isCancelled {
            // Stopped by a signal: what was read is answered; what was not stays unread.
            log.info("stopped reading standard input after line \(lineNumber): every line up to it is answered, the lines after it are not taken")
            return
        }
        // End of input means exit, unless the input just said so itself; once what was
        // asked is answered, so that the end of the input cancels no sequence.
        while !owed.isEmpty {
            guard await owed.removeFirst().answered() else { return }
        }
        if !Task.isCancelled && (last != nil || ranSequence) && last != .exit {
            events.send(.exit, origin: "end of input")
        }
    }

    /// Prints `answer` as one line: the state's name, then the stored paths or the cause.
    public func sync(_ answer: ShutterAnswer) async {
        await output.write(answer.summary)
    }

    /// The name of a `sequence NAME` line, or `nil`.
    static func sequence(in line: String) -> String? {
        let words = line.split(whereSeparator: \.isWhitespace)
        guard words.count == 2, words[0].lowercased() == "sequence" else { return nil }
        return String(words[1])
    }

    /// The text of a `label TEXT` line (empty: `label` alone clears it), or `nil`.
    static func label(in line: String) -> String? {
        let text = line.trimmingCharacters(in: .whitespaces)
        guard text.lowercased() == "label" || text.lowercased().hasPrefix("label ") else { return nil }
        return String(text.dropFirst(5)).trimmingCharacters(in: .whitespaces)
    }

    /// A `set KEY=VALUE …` or `get [KEY …]` line as a settings request (or what is wrong
    /// with it); `nil` for any other line.
    func settingsRequest(for line: String, lineNumber: Int) -> Result<SettingsRequest, ShutterError>? {
        let words = line.split(whereSeparator: \.isWhitespace).map(String.init)
        guard let verb = words.first?.lowercased(), verb == "set" || verb == "get" else { return nil }
        let origin = "line \(lineNumber)"
        if verb == "get" { return .success(SettingsRequest(.read(Array(words.dropFirst())), origin: origin)) }
        var changes: [SettingChange] = []
        for word in words.dropFirst() {
            guard let change = SettingChange(parsing: word) else {
                return .failure(ShutterError(.invalidConfiguration, "'\(word.prefix(60))' is not KEY=VALUE", fix: "write set iso=400 shutterspeed=1/200"))
            }
            changes.append(change)
        }
        guard !changes.isEmpty else {
            return .failure(ShutterError(.invalidConfiguration, "set names no setting", fix: "write set iso=400 shutterspeed=1/200"))
        }
        return .success(SettingsRequest(.change(changes), origin: origin))
    }

    func event(for line: String) -> ShutterEvent {
        let word = line.trimmingCharacters(in: .whitespacesAndNewlines)
        if word.isEmpty && interactive { return .capture }
        return ShutterEvent(parsing: word)
    }
}

/// One line's turn for its answer: ended when the answer is printed; the reader waits
/// for the oldest turns so that it never runs far ahead of the answers.
private final class AnswerTurn: Sendable {
    private let state = Mutex<(ended: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func end() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.ended = true
            return state.waiter.take()
        }?.resume()
    }

    /// Waits for the end; false when the waiting task was cancelled first.
    func answered() async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ended = state.withLock { state -> Bool in
                    if !state.ended && !Task.isCancelled { state.waiter = continuation }
                    return state.ended || Task.isCancelled
                }
                if ended { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiter.take() }?.resume()
        }
        return state.withLock { $0.ended }
    }
}
