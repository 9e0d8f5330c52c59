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

    /// Makes every plugin of `config` through `registry`. Every plugin is tried: one
    /// mistake throws its ``ConfigError`` (an unknown type, a bad option, an unknown key),
    /// several throw ``ConfigErrors``, in file order.
    public init(config: PipelineConfig, registry: PluginRegistry, log: Logger, console: Console = .standardOutput) throws {
        self.config = config
        func environment(_ spec: PluginSpec) -> PluginEnvironment {
            PluginEnvironment(session: config.session, instanceName: spec.name, log: log.named("\(spec.kind) \(spec.name)"),
                              console: console)
        }
        var errors: [ConfigError] = []
        func attempt<T>(_ make: () throws -> T) throws -> T? {
            do { return try make() } catch let error as ConfigError { errors.append(error); return nil }
        }
        let backend = try attempt { try registry.makeBackend(config.backend, environment: environment(config.backend)) }
        let triggers = try config.triggers.map { spec in try attempt { NamedTrigger(name: spec.name, source: try registry.makeTrigger(spec, environment: environment(spec))) } }
        let sinks = try config.sinks.map { spec in try attempt { NamedSink(name: spec.name, sink: try registry.makeSink(spec, environment: environment(spec))) } }
        if errors.count == 1 { throw errors[0] }
        if errors.count > 1 { throw ConfigErrors(errors) }
        self.backend = backend!
        self.triggers = triggers.compactMap { $0 }
        self.sinks = sinks.compactMap { $0 }
    }

    /// Whether any sink keeps the photos' bytes (``SinkRole/archival``). Without one, the
    /// backend keeps every shot on the camera's card (rule 12).
    public var archivesPhotos: Bool { sinks.contains { $0.sink.role == .archival } }

    /// A coordinator that runs this pipeline.
    public func makeCoordinator(log: Logger, observer: (@Sendable (CoordinatorStatus) -> Void)? = nil,
                                tracker: ShotTracker = ShotTracker()) -> ShutterCoordinator {
        ShutterCoordinator(backend: backend, triggers: triggers, sinks: sinks, session: config.session,
                           settings: config.coordinator, log: log.named("coordinator"), observer: observer, tracker: tracker)
    }
}

/// Several mistakes in one config, found in one pass (one per plugin at most: a plugin's
/// options stop at their first mistake), in file order, at most ``limit``.
public struct ConfigErrors: Error, Sendable, Equatable, CustomStringConvertible {
    /// The most reported at once.
    public static let limit = 20
    /// The mistakes, in file order.
    public var errors: [ConfigError]

    /// Sorts `errors` by place and keeps the first ``limit``.
    public init(_ errors: [ConfigError]) {
        self.errors = Array(errors.sorted { ($0.location?.line ?? 0, $0.location?.column ?? 0) < ($1.location?.line ?? 0, $1.location?.column ?? 0) }
            .prefix(Self.limit))
    }

    /// One line per mistake, then the count.
    public var description: String {
        (errors.map { "error: \($0)" } + ["\(errors.count) error\(errors.count == 1 ? "" : "s") in the config"]).joined(separator: "\n")
    }
}
