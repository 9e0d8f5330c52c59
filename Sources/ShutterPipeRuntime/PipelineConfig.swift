import ShutterPipeKit
import ShutterPipeSupport

/// A whole pipeline config, checked for shape: which plugins, with which options, and
/// how the coordinator behaves. Plugin options are checked when the plugins are made
/// (``Pipeline/init(config:registry:log:)``).
///
/// Top-level keys: `version` (must be 1), `session`, `backend`, `triggers`, `sinks`,
/// `coordinator`, `sequences`, `shotList`. See docs/config.md.
public struct PipelineConfig: Sendable {
    /// The config version this build reads.
    public static let version = 1

    /// The session name, used in templates and logs.
    public var session: String
    /// The capture backend: the first of a `backend:` list.
    public var backend: PluginSpec
    /// The backends after the first of a `backend:` list: they deliver shots by themselves
    /// (a hot folder beside a tethered camera); captures go to the first.
    public var companionBackends: [PluginSpec] = []
    /// The trigger sources, at least one.
    public var triggers: [PluginSpec]
    /// The sinks, at least one.
    public var sinks: [PluginSpec]
    /// How the coordinator behaves.
    public var coordinator: CoordinatorSettings
    /// The top-level options, for hosts that read keys of their own (such as `plugins`).
    public var topLevel: PluginOptions

    /// Reads a config document. `hostKeys` are top-level keys the host reads itself.
    public init(root: ConfigNode, hostKeys: [String] = []) throws {
        let top = try PluginOptions(root, owner: "config", handledKeys: hostKeys)
        topLevel = top
        guard let version = try top.int("version") else {
            throw ConfigError("config: missing key 'version'; add 'version: \(Self.version)' at the top", at: root.location)
        }
        guard version == Self.version else {
            throw ConfigError("config: version \(version) is not supported; this shutterpipe reads version \(Self.version)", at: top.location(of: "version"))
        }
        session = try top.string("session", default: "session")
        guard !session.isEmpty else { throw top.error("'session' must not be empty", key: "session") }

        var names = NameAllocator()
        guard let backendNode = try top.node("backend") else {
            throw ConfigError("config: missing key 'backend' (a map with a 'type', such as 'type: file-stub')", at: root.location)
        }
        if case .sequence(let items) = backendNode.value {
            guard let first = items.first else {
                throw ConfigError("config: 'backend' needs at least one entry (a map with a 'type', such as 'type: gphoto2')", at: backendNode.location)
            }
            backend = try Self.spec(first, kind: .backend, owner: "backend 1", names: &names)
            companionBackends = try items.dropFirst().enumerated().map { index, item in
                try Self.spec(item, kind: .backend, owner: "backend \(index + 2)", names: &names)
            }
        } else {
            backend = try Self.spec(backendNode, kind: .backend, owner: "backend", names: &names)
        }
        triggers = try Self.specs(top, key: "triggers", kind: .trigger, example: "- type: stdin", names: &names)
        sinks = try Self.specs(top, key: "sinks", kind: .sink, example: "- type: files", names: &names)

        var settings = CoordinatorSettings()
        if let block = try top.section("coordinator") {
            settings.autoEnter = try block.bool("autoEnter", default: settings.autoEnter)
            settings.enterAtStart = try block.bool("enterAtStart", default: settings.enterAtStart)
            settings.queueLimit = try block.int("queueLimit", default: settings.queueLimit, in: 0...100_000)
            settings.enterTimeout = try block.duration("enterTimeout", default: settings.enterTimeout)
            settings.captureTimeout = try block.duration("captureTimeout", default: settings.captureTimeout)
            settings.storeTimeout = try block.duration("storeTimeout", default: settings.storeTimeout)
            settings.finishTimeout = try block.duration("finishTimeout", default: settings.finishTimeout)
            settings.exitTimeout = try block.duration("exitTimeout", default: settings.exitTimeout)
            settings.syncTimeout = try block.duration("syncTimeout", default: settings.syncTimeout)
            settings.settingsTimeout = try block.duration("settingsTimeout", default: settings.settingsTimeout)
            block.recordUnknownKeys()
        }
        settings.sequences = try SequencePlan.plans(top)
        settings.shotList = try ShotList.load(top, sequences: settings.sequences)
        coordinator = settings
        // Recorded, not thrown: the pipeline reports them with every plugin's mistakes.
        top.recordUnknownKeys()
    }

    private static func specs(_ top: PluginOptions, key: String, kind: PluginKind, example: String,
                              names: inout NameAllocator) throws -> [PluginSpec] {
        guard let node = try top.node(key) else {
            throw top.error("missing key '\(key)' (a list such as '\(example)')")
        }
        guard case .sequence(let items) = node.value else {
            throw ConfigError("config: '\(key)' must be a list (\(example)); got \(node.kindDescription)", at: node.location)
        }
        guard !items.isEmpty else {
            throw ConfigError("config: '\(key)' needs at least one entry (\(example))", at: node.location)
        }
        return try items.enumerated().map { index, item in
            try spec(item, kind: kind, owner: "\(kind) \(index + 1)", names: &names)
        }
    }

    private static func spec(_ node: ConfigNode, kind: PluginKind, owner: String, names: inout NameAllocator) throws -> PluginSpec {
        let probe = try PluginOptions(node, owner: owner)
        guard let type = try probe.string("type"), !type.isEmpty else {
            throw ConfigError("\(owner): missing key 'type'", at: node.location)
        }
        let explicitName = try probe.string("name")
        let name = try names.allocate(explicitName, type: type, kind: kind, at: probe.location(of: "name"))
        let options = try PluginOptions(node, owner: "\(kind) '\(name)'", handledKeys: ["type", "name"])
        return PluginSpec(kind: kind, type: type, typeLocation: probe.location(of: "type"), name: name, options: options)
    }
}

/// Gives every plugin instance a unique name per kind.
private struct NameAllocator {
    private var used: Set<String> = []

    mutating func allocate(_ explicit: String?, type: String, kind: PluginKind, at location: SourceLocation) throws -> String {
        if let explicit {
            guard used.insert("\(kind)/\(explicit)").inserted else {
                throw ConfigError("\(kind) name '\(explicit)' is used twice; give each \(kind) its own name", at: location)
            }
            return explicit
        }
        var candidate = type
        var counter = 1
        while !used.insert("\(kind)/\(candidate)").inserted {
            counter += 1
            candidate = "\(type)-\(counter)"
        }
        return candidate
    }
}
