#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// A sink that runs a program for each photo and at each step of the session, compatible
/// with gphoto2's `--hook-script`: the environment has `ACTION` and `ARGUMENT`.
///
/// Actions: `init` (the session starts), `start` (photo mode entered), `download` (once
/// per file an earlier sink stored; `ARGUMENT` is its path), `failed` (a capture failed),
/// `exit` (photo mode left), `stop` (the session ends). `init`, `start`, `download` and
/// `stop` are gphoto2's; `failed` and `exit` are the ones its users asked for. The
/// program runs without a shell, with argv as configured, under a timeout.
public final class CommandSink: PhotoSink {
    public static let typeName = "command"

    /// The options of the `command` sink.
    public struct Options: Sendable, Equatable {
        /// The program and its arguments.
        public var command: [String] = []
        /// How long one run may take; it is killed after that.
        public var timeout: Duration = .seconds(30)
        /// Whether a failing `download` run makes the photo fail.
        public var failPhoto = false
        /// The actions to run for.
        public var actions: Set<String> = Set(CommandSink.actions)
        public init() {}
    }

    public static let actions = ["init", "start", "download", "failed", "exit", "stop"]

    public static func register(in registry: PluginRegistry) throws {
        try registry.registerSink(typeName, summary: "runs a program per photo and session step (argv, no shell); gphoto2 --hook-script compatible") { options, environment in
            CommandSink(options: try Options(options), session: environment.session, log: environment.log)
        }
    }

    private let options: Options
    private let session: String
    private let log: Logger
    private let runner = BlockingQueue(label: "shutterpipe.command")

    /// A hook acts on photos that other sinks stored; it keeps no copy.
    public var role: SinkRole { .processing }

    public init(options: Options, session: String, log: Logger = .discarding) {
        self.options = options
        self.session = session
        self.log = log
    }

    public func begin() async throws {
        _ = await run("init", [:])
    }

    public func store(_ photo: CapturedPhoto, context: ShotContext) async throws -> SinkReceipt {
        // What earlier sinks stored that is a file here: the files sink's receipts are paths,
        // relative to the session's folder when its `directory` is (`captures`, with no
        // `./`); other sinks may report other kinds of locations.
        let files = context.storedSoFar.filter { Self.isFile($0.location) }
        var warnings: [String] = []
        if files.isEmpty && options.actions.contains("download") {
            let reason = context.storedSoFar.isEmpty ? "no earlier sink stored the photo"
                : "no earlier sink stored it as a file here (\(context.storedSoFar.map(\.location).prefix(3).joined(separator: ", ")))"
            if options.failPhoto {
                throw ShutterError(.unexpected, "hook \(options.command[0]) has no file to run for: \(reason)", fix: "list a files sink before the command sink")
            }
            log.warning("hook \(options.command[0]) has no file to run for: \(reason); list a files sink before the command sink")
            warnings.append("hook \(options.command[0]) did not run: \(reason)")
        }
        for file in files {
            let outcome = await run("download", ["ARGUMENT": file.location, "SHUTTERPIPE_SHOT": String(context.shotNumber),
                                                 "SHUTTERPIPE_SHOT_ID": context.shot.description,
                                                 "SHUTTERPIPE_SEQUENCE": file.sequence.map(String.init) ?? "",
                                                 "SHUTTERPIPE_CAMERA_FILE": file.cameraFile ?? ""])
            if let problem = outcome {
                if options.failPhoto { throw ShutterError(.unexpected, "hook \(options.command[0]) \(problem) for \(file.location)", fix: "see the log for its output") }
                warnings.append("hook \(options.command[0]) \(problem)")
            }
        }
        return SinkReceipt(files: [], warnings: warnings)
    }

    /// Whether `location` names a regular file (absolute, or relative to the working folder).
    private static func isFile(_ location: String) -> Bool {
        var info = stat()
        return !location.isEmpty && stat(location, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    public func observe(_ answer: ShutterAnswer) async {
        let action: String
        switch (answer.request.event, answer.state) {
        case (.enter, .enteredPhotoMode): action = "start"
        case (_, .photoFailed): action = "failed"
        case (.exit, .exitedOrUnableToEnter): action = "exit"
        default: return
        }
        var environment = ["SHUTTERPIPE_STATE": answer.state.rawValue, "SHUTTERPIPE_EVENT": answer.request.event.rawValue]
        if let failure = answer.failure {
            environment["SHUTTERPIPE_CAUSE"] = failure.cause.rawValue
            environment["SHUTTERPIPE_MESSAGE"] = failure.description
        }
        if let shot = answer.shot {
            environment["SHUTTERPIPE_SHOT"] = String(shot.number)
            environment["SHUTTERPIPE_SHOT_ID"] = shot.description
        }
        if let sequence = answer.stored.first?.sequence { environment["SHUTTERPIPE_SEQUENCE"] = String(sequence) }
        _ = await run(action, environment)
    }

    public func end() async {
        _ = await run("stop", [:])
    }

    /// Runs the program for `action`; returns what went wrong, if anything.
    private func run(_ action: String, _ extra: [String: String]) async -> String? {
        guard options.actions.contains(action) else { return nil }
        var environment = ProcessInfo.processInfo.environment
        environment["ACTION"] = action
        environment["ARGUMENT"] = extra["ARGUMENT"] ?? ""
        environment["SHUTTERPIPE_SESSION"] = session
        environment.merge(extra) { $1 }
        let (command, timeout, log, prepared) = (options.command, options.timeout, self.log, environment)
        return await runner.run { Self.execute(command, environment: prepared, timeout: timeout, action: action, log: log) }
    }

    /// Runs the program in a process group of its own (so a timeout kills whatever it
    /// started too), reading its output into the log.
    private static func execute(_ command: [String], environment: [String: String], timeout: Duration, action: String, log: Logger) -> String? {
        let completion: ChildProcess.Completion
        do {
            completion = try ChildProcess.run(command, environment: environment, captureErrors: true, timeout: timeout, processGroup: true)
        } catch {
            log.warning("hook \(command[0]) (\(action)) could not start: \(error.reason)")
            return "could not start"
        }
        for (data, level) in [(completion.output, LogLevel.info), (completion.errorOutput, LogLevel.warning)] {
            for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
                log.log(level, "hook \(command[0]) (\(action)): \(line)")
            }
        }
        if completion.timedOut {
            log.warning("hook \(command[0]) (\(action)) killed after \(formatDuration(timeout))")
            return "timed out after \(formatDuration(timeout))"
        }
        guard completion.status.succeeded else {
            log.warning("hook \(command[0]) (\(action)) \(completion.status)")
            return "\(completion.status)"
        }
        return nil
    }
}

extension CommandSink.Options {
    /// Reads the options of a `command` sink.
    public init(_ options: PluginOptions) throws {
        self.init()
        command = try options.stringList("command")
        guard let program = command.first, !program.isEmpty else {
            throw options.error("needs 'command', the program and its arguments as a list, such as [/home/me/hook.sh, --fast]")
        }
        timeout = try options.duration("timeout", default: timeout)
        failPhoto = try options.bool("failPhoto", default: failPhoto)
        if options.contains("actions") {
            let listed = try options.stringList("actions")
            for action in listed where !CommandSink.actions.contains(action) {
                throw options.error("unknown action '\(action)'; actions: \(CommandSink.actions.joined(separator: ", "))", key: "actions")
            }
            actions = Set(listed)
        }
    }
}
