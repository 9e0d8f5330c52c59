import ShutterPipeKit

/// A trigger with the name it has in this pipeline.
public struct NamedTrigger: Sendable {
    /// The instance name ("stdin", or the config's `name:`).
    public var name: String
    /// The trigger.
    public var source: any TriggerSource
    /// Creates one.
    public init(name: String, source: any TriggerSource) {
        self.name = name
        self.source = source
    }
}

/// A sink with the name it has in this pipeline.
public struct NamedSink: Sendable {
    /// The instance name ("files", or the config's `name:`).
    public var name: String
    /// The sink.
    public var sink: any PhotoSink
    /// Creates one.
    public init(name: String, sink: any PhotoSink) {
        self.name = name
        self.sink = sink
    }
}
