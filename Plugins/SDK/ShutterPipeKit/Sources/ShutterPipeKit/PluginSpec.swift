/// One plugin instance as the config describes it: its kind, type, name and options.
public struct PluginSpec: Sendable {
    /// Trigger, backend or sink.
    public var kind: PluginKind
    /// The `type:` value.
    public var type: String
    /// Where the `type:` value is.
    public var typeLocation: SourceLocation
    /// The instance name: `name:`, else the type (with `-2`, `-3`… for repeats).
    public var name: String
    /// The rest of the map, for the plugin's factory.
    public var options: PluginOptions

    /// Creates a spec.
    public init(kind: PluginKind, type: String, typeLocation: SourceLocation, name: String, options: PluginOptions) {
        self.kind = kind
        self.type = type
        self.typeLocation = typeLocation
        self.name = name
        self.options = options
    }
}
