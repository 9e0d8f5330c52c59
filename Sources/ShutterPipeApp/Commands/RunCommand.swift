#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeRuntime
import ShutterPipeSupport

extension LogFormat: ExpressibleByArgument {}

/// `shutterpipe run`: runs a pipeline until its triggers end or a signal stops it.
struct RunCommand: ParsableCommand {
    static let defaultConfig = "Config/default.yaml"

    static let configuration = CommandConfiguration(
        commandName: "run", abstract: "run a pipeline (default config: \(defaultConfig))",
        discussion: """
        The config is given as FILE (`shutterpipe run studio.yaml`, as for validate) or with
        --config FILE. Runs the pipeline it describes until every trigger has finished (for the stdin
        trigger: end of input), or until SIGINT, SIGTERM or SIGHUP. Queued events are still
        answered before it exits; a second signal stops at once.

        Exit codes: 0 when every event was answered without a failure; 4 when the session
        ran but events failed (a shot, an enter: the last log line gives the count); 1 when
        it could not start (a trigger, a plugin); 2 for a usage mistake; 3 for an invalid
        config.
        """)

    @Argument(valueName: "FILE", help: "the pipeline config (default: \(defaultConfig)); the same as --config FILE")
    var files: [String] = []

    @Option(short: "c", valueName: "FILE", help: "the pipeline config (default: \(defaultConfig))")
    var config: String?

    @Option(valueName: "FORMAT", help: "human lines, or json: one JSON object per line on stderr")
    var logFormat: LogFormat = .human

    @Flag(help: "no live status line, even on a terminal")
    var noStatus = false

    @Option(valueName: "PATH", help: "load a plugin library, or the plugins in a folder (also: the config's plugins.paths and $SHUTTERPIPE_PLUGIN_PATH)")
    var pluginPath: [String] = []

    @Flag(short: "v", help: "also log debug records")
    var verbose = false

    func run(_ context: CommandContext) async throws -> Int32 {
        let given = Set(files + (config.map { [$0] } ?? []))
        guard given.count <= 1 else {
            context.errors.printLine("shutterpipe run: one config at a time, and \(given.sorted().joined(separator: ", ")) were given; run one shutterpipe per config")
            return ShutterPipeCLI.usageError
        }
        let config = given.first
        let path = config ?? Self.defaultConfig
        if config == nil && !FileManager.default.fileExists(atPath: path) {
            context.errors.printLine("shutterpipe run: no config given and \(Self.defaultConfig) is not in this folder; run from the shutterpipe checkout or give one: shutterpipe run FILE")
            return ShutterPipeCLI.configError
        }
        let interactive = isatty(STDERR_FILENO) == 1
        let output = LogOutput(format: logFormat, minimumLevel: verbose ? .debug : .info, statusLine: interactive && !noStatus)
        let log = output.logger(source: "shutterpipe")
        let pipeline: Pipeline
        do {
            pipeline = try PipelineLoader.load(path, registry: context.registry, log: output.logger(source: "pipeline"), console: output.console,
                                               pluginPaths: pluginPath.map { PluginPath($0, from: .commandLine) }) { log.info($0) }
        } catch let error as ConfigError {
            context.errors.printLine("error: \(error)")
            return ShutterPipeCLI.configError
        } catch let errors as ConfigErrors {
            context.errors.printLine("\(errors)")
            return ShutterPipeCLI.configError
        } catch let error as PluginPathError {
            context.errors.printLine("shutterpipe run: \(error)")
            return ShutterPipeCLI.runFailed
        }
        log.info("session '\(pipeline.config.session)': backend \(([pipeline.config.backend] + pipeline.config.companionBackends).map(\.name).joined(separator: ", ")), triggers \(pipeline.triggers.map(\.name).joined(separator: ", ")), sinks \(pipeline.sinks.map(\.name).joined(separator: ", "))")

        // Only with a status line to show: its refreshes ask every camera for its battery,
        // which a script's session should not spend camera time on.
        let statusUpdates = output.showsStatus ? StatusUpdater(output: output, sinks: pipeline.sinks, backend: pipeline.backend) : nil
        let coordinator = pipeline.makeCoordinator(log: output.logger(source: "coordinator"), observer: { status in
            statusUpdates?.update(status)
        }, tracker: statusUpdates?.tracker ?? ShotTracker())
        statusUpdates?.update(CoordinatorStatus())
        let signals: SignalHandler?
        do {
            signals = try SignalHandler { signal in
                log.info("\(ChildProcess.ExitStatus.name(ofSignal: signal)): finishing what is queued, then stopping (again to stop now)")
                coordinator.shutdown()
            }
        } catch {
            signals = nil
            log.warning("cannot take SIGINT, SIGTERM and SIGHUP (\(error)): they end the session at once, without answering the shot in flight")
        }
        let status = await coordinator.run()
        signals?.cancel()
        statusUpdates?.stop()
        output.clearStatus()
        guard status.triggerFailures.isEmpty && status.startFailures.isEmpty else { return ShutterPipeCLI.runFailed }
        if status.eventsFailed > 0 {
            log.warning("\(status.eventsFailed) event(s) failed (\(status.photosFailed) of them shots): exit \(ShutterPipeCLI.eventsFailed)")
            return ShutterPipeCLI.eventsFailed
        }
        return ShutterPipeCLI.success
    }
}
