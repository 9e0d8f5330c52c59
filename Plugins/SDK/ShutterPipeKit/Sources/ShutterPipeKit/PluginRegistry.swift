import Synchronization

/// The kinds of plugin. It may grow (contract 10 on): switch over it with `@unknown default`.
public enum PluginKind: String, Sendable, CaseIterable {
    /// A ``TriggerSource``.
    case trigger
    /// A ``CaptureBackend``.
    case backend
    /// A ``PhotoSink``.
    case sink
}

/// Where a plugin type comes from.
///
/// Closed (`@frozen`): a type is compiled into shutterpipe or loaded from a library;
/// there is no third place.
@frozen public enum PluginOrigin: Sendable, Equatable, CustomStringConvertible {
    /// Part of shutterpipe.
    case builtIn
    /// Loaded at run time from this shared library.
    case library(String)

    /// "built-in" or the library path.
    public var description: String {
        switch self {
        case .builtIn: return "built-in"
        case .library(let path): return path
        }
    }
}

/// A registered plugin type, as `shutterpipe plugins` lists it.
public struct PluginDescriptor: Sendable, Equatable {
    /// Trigger, backend or sink.
    public var kind: PluginKind
    /// The name configs use in `type:`.
    public var type: String
    /// One line saying what it does.
    public var summary: String
    /// Where it comes from.
    public var origin: PluginOrigin
    /// What it declared it can do beyond its kind.
    public var abilities: Set<PluginAbility> = []

    /// The abilities this shutterpipe does not know (the plugin is newer): listed, never used.
    public var unknownAbilities: [PluginAbility] {
        abilities.filter { PluginAbility.known[$0] == nil }.sorted()
    }
}

/// What a plugin factory gets besides its options.
public struct PluginEnvironment: Sendable {
    /// The session name from the config.
    public var session: String
    /// The instance name: the config's `name:`, else the type name.
    public var instanceName: String
    /// A logger for this instance.
    public var log: Logger
    /// Where to print lines for the user's standard output.
    public var console: Console

    /// Creates an environment.
    public init(session: String, instanceName: String, log: Logger, console: Console) {
        self.session = session
        self.instanceName = instanceName
        self.log = log
        self.console = console
    }
}

/// Makes a trigger from its options. Factories only read and check options; they open
/// nothing (no devices, sockets or files), so `shutterpipe validate` can run them.
public typealias TriggerFactory = @Sendable (PluginOptions, PluginEnvironment) throws -> any TriggerSource
/// Makes a backend from its options. See ``TriggerFactory``.
public typealias BackendFactory = @Sendable (PluginOptions, PluginEnvironment) throws -> any CaptureBackend
/// Makes a sink from its options. See ``TriggerFactory``.
public typealias SinkFactory = @Sendable (PluginOptions, PluginEnvironment) throws -> any PhotoSink

/// A type name was registered twice.
public struct DuplicatePluginError: Error, Sendable, CustomStringConvertible {
    /// The descriptor already registered.
    public var existing: PluginDescriptor
    /// Where the second registration came from.
    public var rejectedOrigin: PluginOrigin

    /// A message naming both.
    public var description: String {
        "\(existing.kind) type '\(existing.type)' is already registered (\(existing.origin)); refused the one from \(rejectedOrigin)"
    }
}

/// A command-line command a plugin contributed, as `shutterpipe --help` lists it.
public struct CommandDescriptor: Sendable {
    /// The command's type: the host makes one per run.
    public var command: any ParsableCommand.Type
    /// Where it comes from.
    public var origin: PluginOrigin

    /// The word that selects it.
    public var name: String { command.configuration.commandName }
}

/// A command name was registered twice, or clashes with one of the host's own.
public struct DuplicateCommandError: Error, Sendable, CustomStringConvertible {
    /// The name.
    public var name: String
    /// Where the one already known came from.
    public var existing: PluginOrigin
    /// Where the refused one came from.
    public var rejectedOrigin: PluginOrigin

    /// A message naming both.
    public var description: String {
        "command '\(name)' is already registered (\(existing)); refused the one from \(rejectedOrigin)"
    }
}

/// Plugin factories by kind and type name, and the commands plugins contribute. The
/// host knows plugins only through here.
public final class PluginRegistry: Sendable {
    private enum Factory: Sendable {
        case trigger(TriggerFactory)
        case backend(BackendFactory)
        case sink(SinkFactory)
    }
    private struct Entry: Sendable {
        var descriptor: PluginDescriptor
        var factory: Factory
    }
    private let entries = Mutex<[Entry]>([])
    private let commandEntries = Mutex<[CommandDescriptor]>([])
    private let currentOrigin = Mutex<PluginOrigin>(.builtIn)

    /// An empty registry.
    public init() {}

    /// Registers a trigger type. `abilities` says what it can do beyond a trigger
    /// (``PluginAbility``); the host uses only those. `origin` defaults to where the
    /// registering code was loaded from (built-in, or the plugin library being loaded).
    public func registerTrigger(_ type: String, summary: String, abilities: Set<PluginAbility> = [], origin: PluginOrigin? = nil,
                                make: @escaping TriggerFactory) throws {
        try add(Entry(descriptor: PluginDescriptor(kind: .trigger, type: type, summary: summary, origin: origin ?? currentOrigin.withLock { $0 }, abilities: abilities),
                      factory: .trigger(make)))
    }

    /// Registers a backend type. See ``registerTrigger(_:summary:abilities:origin:make:)``.
    public func registerBackend(_ type: String, summary: String, abilities: Set<PluginAbility> = [], origin: PluginOrigin? = nil,
                                make: @escaping BackendFactory) throws {
        try add(Entry(descriptor: PluginDescriptor(kind: .backend, type: type, summary: summary, origin: origin ?? currentOrigin.withLock { $0 }, abilities: abilities),
                      factory: .backend(make)))
    }

    /// Registers a sink type. See ``registerTrigger(_:summary:abilities:origin:make:)``.
    public func registerSink(_ type: String, summary: String, abilities: Set<PluginAbility> = [], origin: PluginOrigin? = nil,
                                make: @escaping SinkFactory) throws {
        try add(Entry(descriptor: PluginDescriptor(kind: .sink, type: type, summary: summary, origin: origin ?? currentOrigin.withLock { $0 }, abilities: abilities),
                      factory: .sink(make)))
    }

    /// Registers a command-line command (`shutterpipe cameras`). Its name must be new.
    public func registerCommand(_ command: any ParsableCommand.Type, origin: PluginOrigin? = nil) throws {
        let descriptor = CommandDescriptor(command: command, origin: origin ?? currentOrigin.withLock { $0 })
        try commandEntries.withLock { entries in
            if let existing = entries.first(where: { $0.name == descriptor.name }) {
                throw DuplicateCommandError(name: descriptor.name, existing: existing.origin, rejectedOrigin: descriptor.origin)
            }
            entries.append(descriptor)
        }
    }

    /// The commands plugins contributed, by name.
    public var commands: [CommandDescriptor] {
        commandEntries.withLock { $0 }.sorted { $0.name < $1.name }
    }

    /// Runs `body` with registrations attributed to `origin` (the plugin loader uses this
    /// while a library registers its types). Registrations `body` makes are undone if it
    /// throws, so a plugin is loaded whole or not at all.
    public func registering(from origin: PluginOrigin, _ body: () throws -> Void) throws {
        let before = (entries.withLock { $0.count }, commandEntries.withLock { $0.count })
        let previous = currentOrigin.withLock { state -> PluginOrigin in defer { state = origin }; return state }
        defer { currentOrigin.withLock { $0 = previous } }
        do {
            try body()
        } catch {
            entries.withLock { $0.removeSubrange(before.0...) }
            commandEntries.withLock { $0.removeSubrange(before.1...) }
            throw error
        }
    }

    /// Every registered type, by kind, then by name.
    public var descriptors: [PluginDescriptor] {
        entries.withLock { $0.map(\.descriptor) }.sorted {
            ($0.kind.sortOrder, $0.type) < ($1.kind.sortOrder, $1.type)
        }
    }

    /// The type names registered for `kind`, sorted.
    public func types(of kind: PluginKind) -> [String] {
        descriptors.filter { $0.kind == kind }.map(\.type)
    }

    /// Makes a trigger as `spec` describes.
    public func makeTrigger(_ spec: PluginSpec, environment: PluginEnvironment) throws -> any TriggerSource {
        guard case .trigger(let make) = try entry(for: spec).factory else { preconditionFailure("kind checked by lookup") }
        return try build(spec) { try make(spec.options, environment) }
    }

    /// Makes a backend as `spec` describes.
    public func makeBackend(_ spec: PluginSpec, environment: PluginEnvironment) throws -> any CaptureBackend {
        guard case .backend(let make) = try entry(for: spec).factory else { preconditionFailure("kind checked by lookup") }
        return try build(spec) { try make(spec.options, environment) }
    }

    /// Makes a sink as `spec` describes.
    public func makeSink(_ spec: PluginSpec, environment: PluginEnvironment) throws -> any PhotoSink {
        guard case .sink(let make) = try entry(for: spec).factory else { preconditionFailure("kind checked by lookup") }
        return try build(spec) { try make(spec.options, environment) }
    }

    /// Makes a plugin, then checks its options for unknown keys, and throws every mistake
    /// found together. A factory that throws has its error reported with those recorded
    /// before it (its unknown keys cannot be told then: it stopped reading).
    private func build<T>(_ spec: PluginSpec, _ make: () throws -> T) throws -> T {
        let declared = try entry(for: spec).descriptor.abilities
        let plugin: T
        do { plugin = try make() } catch let error as ConfigError {
            try ConfigErrors.throwing(spec.options.recordedMistakes + [error])
            throw error
        } catch let errors as ConfigErrors {
            try ConfigErrors.throwing(spec.options.recordedMistakes + errors.all)
            throw errors
        }
        try spec.options.rejectUnknownKeys()
        for ability in PluginAbility.known.keys.sorted() {
            guard let implemented = ability.isImplemented(by: plugin), implemented != declared.contains(ability) else { continue }
            throw ConfigError(AbilityMismatchError(type: spec.type, kind: spec.kind, ability: ability, declared: declared.contains(ability)).description,
                              at: spec.typeLocation)
        }
        return plugin
    }

    /// The abilities `spec`'s type declared (empty for a type not registered).
    public func abilities(of spec: PluginSpec) -> Set<PluginAbility> {
        (try? entry(for: spec))?.descriptor.abilities ?? []
    }

    private func add(_ entry: Entry) throws {
        try entries.withLock { entries in
            if let existing = entries.first(where: { $0.descriptor.kind == entry.descriptor.kind && $0.descriptor.type == entry.descriptor.type }) {
                throw DuplicatePluginError(existing: existing.descriptor, rejectedOrigin: entry.descriptor.origin)
            }
            entries.append(entry)
        }
    }

    private func entry(for spec: PluginSpec) throws -> Entry {
        if let entry = entries.withLock({ $0.first { $0.descriptor.kind == spec.kind && $0.descriptor.type == spec.type } }) {
            return entry
        }
        let known = types(of: spec.kind)
        var message = "unknown \(spec.kind) type '\(spec.type)'"
        if let suggestion = closestMatch(to: spec.type, in: known) { message += "; did you mean '\(suggestion)'?" }
        message += known.isEmpty ? "; no \(spec.kind) types are registered" : "; known \(spec.kind) types: \(known.joined(separator: ", "))"
        message += ". A third-party plugin's type is known once its library is loaded: --plugin-path PATH, the config's plugins.paths, or $SHUTTERPIPE_PLUGIN_PATH"
        throw ConfigError(message, at: spec.typeLocation)
    }
}

extension PluginKind {
    fileprivate var sortOrder: Int { PluginKind.allCases.firstIndex(of: self)! }
}
