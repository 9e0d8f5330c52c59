import ShutterPipeKit
import ShutterPipeSupport

/// A pipeline made from a config: the plugin instances, ready to run.
public struct Pipeline: Sendable {
    /// The config it was made from.
    public var config: PipelineConfig
    /// The backend.
    public var backend: any CaptureBackend
    /// The triggers with their names.
    public var triggers: [NamedTrigger]
    /// The sinks with their names.
    public var sinks: [NamedSink]

    /// Makes every plugin of `config` through `registry`. Throws the first
    /// ``ConfigError``: an unknown type, a bad option, an unknown key.
    public init(config: PipelineConfig, registry: PluginRegistry, log: Logger, console: Console = .standardOutput) throws {
        self.config = config
        func environment(_ spec: PluginSpec) -> PluginEnvironment {
            PluginEnvironment(session: config.session, instanceName: spec.name, log: log.named("\(spec.kind) \(spec.name)"),
                              console: console)
        }
        backend = try registry.makeBackend(config.backend, environment: environment(config.backend))
        triggers = try config.triggers.map { NamedTrigger(name: $0.name, source: try registry.makeTrigger($0, environment: environment($0))) }
        sinks = try config.sinks.map { NamedSink(name: $0.name, sink: try registry.makeSink($0, environment: environment($0))) }
    }

    /// Whether any sink keeps the photos' bytes (``SinkRole/archival``). Without one, the
    /// backend keeps every shot on the camera's card (rule 12).
    public var archivesPhotos: Bool { sinks.contains { $0.sink.role == .archival } }

    /// A coordinator that runs this pipeline.
    public func makeCoordinator(log: Logger, observer: (@Sendable (CoordinatorStatus) -> Void)? = nil) -> ShutterCoordinator {
        ShutterCoordinator(backend: backend, triggers: triggers, sinks: sinks, session: config.session,
                           settings: config.coordinator, log: log.named("coordinator"), observer: observer)
    }
}
