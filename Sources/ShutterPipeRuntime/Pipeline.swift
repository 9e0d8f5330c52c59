import ShutterPipeKit
import ShutterPipeSupport

/// A pipeline made from a config: the plugin instances, ready to run.
public struct Pipeline: Sendable {
    /// The config it was made from.
    public var config: PipelineConfig
    /// The backend: the one that takes captures.
    public var backend: any CaptureBackend
    /// What its type declared it can do.
    public var backendAbilities: Set<PluginAbility>
    /// The backends beside it, which deliver shots by themselves (``PipelineConfig/companionBackends``).
    public var companions: [any CaptureBackend]
    /// The triggers with their names.
    public var triggers: [NamedTrigger]
    /// The sinks with their names.
    public var sinks: [NamedSink]

    /// Makes every plugin of `config` through `registry`. Every plugin is tried, and each
    /// reports every mistake it can find (``PluginOptions``): one mistake throws its
    /// ``ConfigError`` (an unknown type, a bad option, an unknown key), several throw
    /// ``ConfigErrors``, in file order, with the config's own (top-level keys, the
    /// coordinator block).
    public init(config: PipelineConfig, registry: PluginRegistry, log: Logger, console: Console = .standardOutput) throws {
        self.config = config
        func environment(_ spec: PluginSpec) -> PluginEnvironment {
            PluginEnvironment(session: config.session, instanceName: spec.name, log: log.named("\(spec.kind) \(spec.name)"),
                              console: console)
        }
        // The config's own mistakes (top-level keys, the coordinator block) and every
        // plugin's, in one report.
        var errors: [ConfigError] = config.topLevel.recordedMistakes
        func attempt<T>(_ make: () throws -> T) throws -> T? {
            do { return try make() } catch let error as ConfigError { errors.append(error); return nil } catch let several as ConfigErrors {
                errors += several.all
                return nil
            }
        }
        let backend = try attempt { try registry.makeBackend(config.backend, environment: environment(config.backend)) }
        let companions = try config.companionBackends.map { spec in try attempt { try registry.makeBackend(spec, environment: environment(spec)) } }
        let triggers = try config.triggers.map { spec in try attempt { NamedTrigger(name: spec.name, source: try registry.makeTrigger(spec, environment: environment(spec)),
                                                                                  abilities: registry.abilities(of: spec)) } }
        let sinks = try config.sinks.map { spec in try attempt { NamedSink(name: spec.name, sink: try registry.makeSink(spec, environment: environment(spec)),
                                                                            abilities: registry.abilities(of: spec)) } }
        try ConfigErrors.throwing(errors)
        self.backend = backend!
        self.backendAbilities = registry.abilities(of: config.backend)
        self.companions = companions.compactMap { $0 }
        self.triggers = triggers.compactMap { $0 }
        self.sinks = sinks.compactMap { $0 }
    }

    /// Whether any sink keeps the photos' bytes (``SinkRole/archival``). Without one, the
    /// backend keeps every shot on the camera's card (rule 12).
    public var archivesPhotos: Bool { sinks.contains { $0.sink.role == .archival } }

    /// A coordinator that runs this pipeline.
    public func makeCoordinator(log: Logger, observer: (@Sendable (CoordinatorStatus) -> Void)? = nil,
                                tracker: ShotTracker = ShotTracker()) -> ShutterCoordinator {
        ShutterCoordinator(backend: backend, backendAbilities: backendAbilities, companions: companions, triggers: triggers, sinks: sinks, session: config.session,
                           settings: config.coordinator, log: log.named("coordinator"), observer: observer, tracker: tracker)
    }
}
