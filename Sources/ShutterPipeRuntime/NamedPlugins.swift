import ShutterPipeKit

/// A trigger with the name it has in this pipeline.
public struct NamedTrigger: Sendable {
    /// The instance name ("stdin", or the config's `name:`).
    public var name: String
    /// The trigger.
    public var source: any TriggerSource
    /// What it declared it can do (``PluginAbility``); the coordinator asks these.
    public var abilities: Set<PluginAbility>
    /// Creates one. `abilities` are the registry's (what its type declared); `nil` for a
    /// trigger the host made itself: what it implements.
    public init(name: String, source: any TriggerSource, abilities: Set<PluginAbility>? = nil) {
        self.name = name
        self.source = source
        self.abilities = abilities ?? PluginAbility.implemented(by: source)
    }
}

/// A sink with the name it has in this pipeline.
public struct NamedSink: Sendable {
    /// The instance name ("files", or the config's `name:`).
    public var name: String
    /// The sink.
    public var sink: any PhotoSink
    /// What it declared it can do (``PluginAbility``); the coordinator asks these.
    public var abilities: Set<PluginAbility>
    /// Creates one. See ``NamedTrigger/init(name:source:abilities:)``.
    public init(name: String, sink: any PhotoSink, abilities: Set<PluginAbility>? = nil) {
        self.name = name
        self.sink = sink
        self.abilities = abilities ?? PluginAbility.implemented(by: sink)
    }
}
