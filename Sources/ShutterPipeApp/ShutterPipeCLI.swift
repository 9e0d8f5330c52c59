#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Dispatch
import Foundation
import ShutterPipeKit
import GPhoto2Backend
import SocketTrigger
import Synchronization
import ShutterPipeRuntime
import ShutterPipeSupport

/// The `shutterpipe` command line.
///
/// Exit codes: 0 success; 1 the pipeline ran but could not do its job (a trigger failed
/// to start); 2 a usage mistake; 3 an invalid config.
public enum ShutterPipeCLI {
    /// Exit code for success.
    public static let success: Int32 = 0
    /// Exit code when running failed.
    public static let runFailed: Int32 = 1
    /// Exit code for a command-line mistake.
    public static let usageError: Int32 = 2
    /// Exit code for an invalid config.
    public static let configError: Int32 = 3

    static let defaultConfig = "Config/default.yaml"

    static let overview = """
    shutterpipe \(ShutterPipeSDK.version): tethered studio photography from a YAML pipeline

    Usage: shutterpipe <command> [options]

    Commands:
      run        run a pipeline (default config: \(defaultConfig))
      validate   check a config without running it
      plugins    list the plugin types
      cameras    list the cameras libgphoto2 detects, with port, serial, battery, card space
      trigger    send enter, capture or exit to a running session's socket trigger
      help       show help for a command

    Options:
      -h, --help     show help
      --version      print the version

    Exit codes: 0 success, 1 run failed, 2 usage error, 3 invalid config.
    See docs/config.md for the config file.
    """

    static let runHelp = """
    Usage: shutterpipe run [--config FILE] [--log-format human|json] [--no-status] [--plugin-path PATH]...

    Runs the pipeline a config describes until every trigger has finished (for the stdin
    trigger: end of input), or until SIGINT/SIGTERM. Queued events are still answered
    before it exits; a second Ctrl-C stops at once.

    Options:
      -c, --config FILE     the pipeline config (default: \(defaultConfig))
      --log-format FORMAT   human (default) or json: one JSON object per line on stderr
      --no-status           no live status line, even on a terminal
      --plugin-path PATH    load a plugin library, or every lib*.so in a folder (also: the
                            config's plugins.paths and $SHUTTERPIPE_PLUGIN_PATH)
      -v, --verbose         also log debug records
    """

    static let validateHelp = """
    Usage: shutterpipe validate FILE... [--plugin-path PATH]...

    Checks a config: its YAML, every key, every plugin's options. Prints 'FILE: ok' and
    exits 0, or prints each problem as FILE:LINE:COLUMN: message and exits 3. Opens no
    camera, device or file.
    """

    static let camerasHelp = """
    Usage: shutterpipe cameras [--port PORT]...

    Lists the cameras libgphoto2 detects on USB, and the ones at the given ports (network
    cameras, such as ptpip:127.0.0.1:15740:15740, are not detected by themselves): model,
    port, serial number, battery and free card space, where the camera reports them. Each
    camera is opened briefly; a camera held by another program says so, with the fix.
    """

    static let triggerHelp = """
    Usage: shutterpipe trigger enter|capture|exit [--socket PATH] [--timeout DURATION]

    Sends one event to a running `shutterpipe run` that has a socket trigger, waits for
    the state that answers it, and prints it as one line (as the stdin trigger does).
    Exits 0 only on success: photoSuccess for capture, enteredPhotoMode for enter, a
    normal exit for exit; 1 otherwise, or when no session listens.

    Options:
      --socket PATH        the socket (default: \(SocketProtocol.defaultPath))
      --timeout DURATION   how long to wait for the answer (default 90s)
    """

    static let pluginsHelp = """
    Usage: shutterpipe plugins [--plugin-path PATH]...

    Lists the plugin types: kind, type name, origin (built-in, or the library it came
    from) and what each does. Libraries from --plugin-path and $SHUTTERPIPE_PLUGIN_PATH are
    loaded first; a refused one is reported and the command exits 1.
    """

    /// Runs the command line and returns the exit code.
    public static func main(_ arguments: [String]) async -> Int32 {
        // A camera or client that goes away mid-write must be an error to handle (EPIPE),
        // not a signal that kills the session without a word.
        signal(SIGPIPE, SIG_IGN)
        let registry = BuiltInPlugins.registry()
        guard let command = arguments.first else {
            printError(overview)
            return usageError
        }
        let rest = Array(arguments.dropFirst())
        do {
            switch command {
            case "run": return try await run(rest, registry: registry)
            case "validate": return try validate(rest, registry: registry)
            case "plugins": return try plugins(rest, registry: registry)
            case "cameras": return try await cameras(rest)
            case "trigger": return try await trigger(rest)
            case "help", "-h", "--help":
                print(help(for: rest.first) ?? overview)
                return success
            case "--version", "version":
                print("shutterpipe \(ShutterPipeSDK.version) (plugin ABI \(ShutterPipeSDK.abi))")
                return success
            default:
                var message = "shutterpipe: unknown command '\(command)'"
                if let suggestion = closestMatch(to: command, in: ["run", "validate", "plugins", "cameras", "trigger", "help"]) {
                    message += "; did you mean '\(suggestion)'?"
                }
                printError(message + "\n\n" + overview)
                return usageError
            }
        } catch let error as UsageError {
            printError("shutterpipe \(command): \(error)\n\n\(help(for: command) ?? overview)")
            return usageError
        } catch {
            printError("shutterpipe \(command): \(error)")
            return runFailed
        }
    }

    static func help(for command: String?) -> String? {
        switch command {
        case "run": return runHelp
        case "validate": return validateHelp
        case "plugins": return pluginsHelp
        case "cameras": return camerasHelp
        case "trigger": return triggerHelp
        default: return nil
        }
    }

    // MARK: run

    static func run(_ arguments: [String], registry: PluginRegistry) async throws -> Int32 {
        let parsed = try Arguments(arguments, spec: .init(
            valued: ["config": "c", "log-format": "", "plugin-path": ""], flags: ["no-status": "", "help": "h", "verbose": "v"]))
        if parsed.flags.contains("help") { print(runHelp); return success }
        guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument '\(parsed.positionals[0])'") }
        let formatName = parsed.values["log-format"] ?? "human"
        guard let format = LogFormat(rawValue: formatName) else {
            throw UsageError("--log-format must be human or json, not '\(formatName)'")
        }
        let path = parsed.values["config"] ?? defaultConfig
        if parsed.values["config"] == nil && !FileManager.default.fileExists(atPath: path) {
            printError("shutterpipe run: no --config given and \(defaultConfig) is not in this folder; run from the shutterpipe checkout or pass --config FILE")
            return configError
        }
        let interactive = isatty(STDERR_FILENO) == 1
        let output = LogOutput(format: format, minimumLevel: parsed.flags.contains("verbose") ? .debug : .info,
                               statusLine: interactive && !parsed.flags.contains("no-status"))
        let pipeline: Pipeline
        do {
            pipeline = try loadPipeline(path, registry: registry, log: output.logger(source: "pipeline"), console: output.console,
                                        pluginPaths: parsed.allValues("plugin-path"))
        } catch let error as ConfigError {
            printError("error: \(error)")
            return configError
        }
        let log = output.logger(source: "shutterpipe")
        log.info("session '\(pipeline.config.session)': backend \(pipeline.config.backend.name), triggers \(pipeline.triggers.map(\.name).joined(separator: ", ")), sinks \(pipeline.sinks.map(\.name).joined(separator: ", "))")

        let statusUpdates = StatusUpdater(output: output, sinks: pipeline.sinks, backend: pipeline.backend)
        let coordinator = pipeline.makeCoordinator(log: output.logger(source: "coordinator")) { status in
            statusUpdates.update(status)
        }
        statusUpdates.update(CoordinatorStatus())
        let signals = SignalHandler { signal in
            log.info("\(signal == SIGINT ? "SIGINT" : "SIGTERM"): finishing what is queued, then stopping (again to stop now)")
            coordinator.shutdown()
        }
        let status = await coordinator.run()
        signals.cancel()
        statusUpdates.stop()
        output.clearStatus()
        return status.triggerFailures.isEmpty ? success : runFailed
    }

    /// Reads a config, loads the plugins it, the command line and the environment name,
    /// and makes the pipeline. A refused plugin is a config error at its `paths` entry (or
    /// at the top of the file for paths from elsewhere).
    static func loadPipeline(_ path: String, registry: PluginRegistry, log: Logger, console: Console = .standardOutput,
                             pluginPaths: [String] = []) throws -> Pipeline {
        try makePipeline(YAMLLoader.load(file: path), registry: registry, log: log, console: console, pluginPaths: pluginPaths)
    }

    /// ``loadPipeline(_:registry:log:console:pluginPaths:)`` on a parsed config.
    static func makePipeline(_ root: ConfigNode, registry: PluginRegistry, log: Logger, console: Console = .standardOutput,
                             pluginPaths: [String] = []) throws -> Pipeline {
        let config = try PipelineConfig(root: root, hostKeys: ["plugins"])
        var configured: [(String, SourceLocation)] = []
        if let block = try config.topLevel.section("plugins") {
            if let node = try block.node("paths"), case .sequence(let items) = node.value {
                for item in items {
                    guard case .scalar(let text, _) = item.value else { throw ConfigError("plugins: 'paths' must be a list of paths", at: item.location) }
                    configured.append((PluginOptions.expandingTilde(text), item.location))
                }
            } else if try block.node("paths") != nil {
                throw block.error("'paths' must be a list of paths, such as [~/.local/lib/shutterpipe]", key: "paths")
            }
            try block.rejectUnknownKeys()
        }
        let others = pluginPaths + PluginLoader.environmentPaths()
        for (library, location) in configured.map({ ($0.0, Optional($0.1)) }) + others.map({ ($0, SourceLocation?.none) }) {
            for failure in PluginLoader.load([library], into: registry) {
                throw ConfigError("\(failure)", at: location ?? root.location)
            }
        }
        return try Pipeline(config: config, registry: registry, log: log, console: console)
    }

    // MARK: validate

    static func validate(_ arguments: [String], registry: PluginRegistry) throws -> Int32 {
        let parsed = try Arguments(arguments, spec: .init(valued: ["plugin-path": ""], flags: ["help": "h"]))
        if parsed.flags.contains("help") { print(validateHelp); return success }
        guard !parsed.positionals.isEmpty else { throw UsageError("name the config file to check") }
        var code = success
        for path in parsed.positionals {
            do {
                let pipeline = try loadPipeline(path, registry: registry, log: .discarding, pluginPaths: parsed.allValues("plugin-path"))
                print("\(path): ok")
                if !pipeline.archivesPhotos {
                    let names = pipeline.sinks.map(\.name).joined(separator: ", ")
                    print("\(path): note: no sink keeps the photos (\(names) only \(pipeline.sinks.count == 1 ? "acts" : "act") on them): every shot stays on the camera's card; add a files sink to keep them on disk")
                }
            } catch let error as ConfigError {
                printError("error: \(error)")
                code = configError
            }
        }
        return code
    }

    // MARK: plugins

    static func plugins(_ arguments: [String], registry: PluginRegistry) throws -> Int32 {
        let parsed = try Arguments(arguments, spec: .init(valued: ["plugin-path": ""], flags: ["help": "h"]))
        if parsed.flags.contains("help") { print(pluginsHelp); return success }
        guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument '\(parsed.positionals[0])'") }
        var refused = false
        for failure in PluginLoader.load(parsed.allValues("plugin-path") + PluginLoader.environmentPaths(), into: registry) {
            printError("error: \(failure)")
            refused = true
        }
        let rows = registry.descriptors.map { [$0.kind.rawValue, $0.type, $0.origin.description, $0.summary] }
        let header = ["KIND", "TYPE", "ORIGIN", "DESCRIPTION"]
        let widths = (0..<3).map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        for row in [header] + rows {
            print((0..<3).map { row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ")
                  + "  " + row[3])
        }
        return refused ? runFailed : success
    }

    // MARK: trigger

    static func trigger(_ arguments: [String]) async throws -> Int32 {
        let parsed = try Arguments(arguments, spec: .init(valued: ["socket": "", "timeout": ""], flags: ["help": "h"]))
        if parsed.flags.contains("help") { print(triggerHelp); return success }
        guard parsed.positionals.count == 1, let event = parsed.positionals.first else {
            throw UsageError("name one event: enter, capture or exit")
        }
        guard ["enter", "capture", "exit"].contains(event) else {
            throw UsageError("unknown event '\(event)'; use enter, capture or exit")
        }
        let path = parsed.values["socket"] ?? SocketProtocol.defaultPath
        let timeoutText = parsed.values["timeout"] ?? "90s"
        guard let timeout = PluginOptions.parseDuration(timeoutText) else { throw UsageError("--timeout needs a duration such as 30s") }
        let queue = BlockingQueue(label: "shutterpipe.trigger")
        let outcome: Result<SocketReply, SocketClientError> = await queue.run {
            Result { () throws(SocketClientError) -> SocketReply in try SocketClient.send(SocketRequest(event: event), to: path, timeout: timeout) }
        }
        switch outcome {
        case .success(let reply):
            if let error = reply.error {
                printError("shutterpipe trigger: the session refused the request: \(error)")
                return runFailed
            }
            print(reply.summary ?? "\(reply)")
            return reply.isSuccess ? success : runFailed
        case .failure(let error):
            printError("shutterpipe trigger: \(error)")
            return runFailed
        }
    }

    // MARK: cameras

    static func cameras(_ arguments: [String]) async throws -> Int32 {
        var ports: [String] = []
        var rest = arguments
        while !rest.isEmpty {
            let argument = rest.removeFirst()
            switch argument {
            case "-h", "--help": print(camerasHelp); return success
            case "--port":
                guard !rest.isEmpty else { throw UsageError("option '--port' needs a value") }
                ports.append(rest.removeFirst())
            default:
                if argument.hasPrefix("--port=") { ports.append(String(argument.dropFirst("--port=".count))); continue }
                throw UsageError("unexpected argument '\(argument)'")
            }
        }
        let (cameras, problem) = await GPhoto2Backend.listCameras(ports: ports)
        if let problem { printError("shutterpipe cameras: \(problem)") }
        guard !cameras.isEmpty else {
            print("No camera detected. Connect one by USB, switch it on and to PTP mode; for a network camera, pass --port ptpip:HOST:PORT:PORT.")
            return success
        }
        let header = ["MODEL", "PORT", "SERIAL", "BATTERY", "CARD FREE"]
        let rows = cameras.map { camera in
            [camera.model, camera.port, camera.serial ?? "-", camera.battery ?? "-",
             camera.freeCardBytes.map(formatByteCount) ?? "-"]
        }
        let widths = (0..<header.count).map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        for row in [header] + rows {
            print(row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces))
        }
        for camera in cameras where camera.problem != nil {
            print("\(camera.port): \(camera.problem!)")
        }
        return success
    }

    static func printError(_ text: String) {
        Console.standardError.printLine(text)
    }
}

/// Keeps the status line fresh: after every coordinator change, and the free space
/// every few seconds.
final class StatusUpdater: Sendable {
    private let output: LogOutput
    private let sinks: [NamedSink]
    private let backend: any CaptureBackend
    private let latest = Mutex<(status: CoordinatorStatus, free: Int64?, camera: CameraStatus?)>((CoordinatorStatus(), nil, nil))
    private let refresher = Mutex<Task<Void, Never>?>(nil)

    init(output: LogOutput, sinks: [NamedSink], backend: any CaptureBackend) {
        self.output = output
        self.sinks = sinks
        self.backend = backend
        let task = Task { [weak self] in
            while !Task.isCancelled {
                await self?.refreshFreeSpace()
                try? await Task.sleep(for: .seconds(5))
            }
        }
        refresher.withLock { $0 = task }
    }

    func update(_ status: CoordinatorStatus) {
        let (free, camera) = latest.withLock { latest -> (Int64?, CameraStatus?) in
            latest.status = status
            return (latest.free, latest.camera)
        }
        output.setStatus(StatusLine.text(status, freeBytes: free, camera: camera))
        Task { await refreshFreeSpace() }
    }

    func stop() {
        refresher.withLock { $0?.cancel() }
    }

    private func refreshFreeSpace() async {
        var free: Int64?
        for sink in sinks {
            if let bytes = await sink.sink.availableCapacity() { free = min(free ?? .max, bytes) }
        }
        let current = latest.withLock { $0.status }
        let camera = current.inPhotoMode ? await backend.status() : nil
        let status = latest.withLock { latest -> CoordinatorStatus in
            latest.free = free
            latest.camera = camera
            return latest.status
        }
        output.setStatus(StatusLine.text(status, freeBytes: free, camera: camera))
    }
}

/// SIGINT and SIGTERM: the first asks for a clean stop, the second exits at once.
final class SignalHandler {
    private let sources: [any DispatchSourceSignal]

    init(onFirst: @escaping @Sendable (Int32) -> Void) {
        let count = Mutex(0)
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { @Sendable in
                let seen = count.withLock { value -> Int in value += 1; return value }
                if seen == 1 { onFirst(number) } else { _exit(130) }
            }
            source.resume()
            return source
        }
    }

    func cancel() {
        sources.forEach { $0.cancel() }
    }
}
