import ShutterPipeKit
import ShutterPipeRuntime
import ShutterPipeSupport

/// A plugin given on the command line or in the environment was refused: not a config
/// mistake, so it names the argument or the variable instead of a place in the file.
public struct PluginPathError: Error, Sendable, CustomStringConvertible {
    /// The refusal.
    public var refusal: PluginLoadError
    public var description: String { refusal.located }
}

/// Makes a pipeline from a config file: the YAML, the plugins it and the command line
/// name, every plugin's options.
public enum PipelineLoader {
    /// The config keys the host reads itself.
    static let hostKeys = ["plugins", "catalogue"]

    /// Reads `path` and makes the pipeline. A refused plugin from the config is a config
    /// error at its `paths` entry; one from `--plugin-path` or the environment is a
    /// ``PluginPathError`` naming that. `notes` hears about libraries in plugin folders
    /// that were skipped.
    public static func load(_ path: String, registry: PluginRegistry, log: Logger, console: Console = .standardOutput,
                            pluginPaths: [PluginPath] = [], notes: (String) -> Void = { _ in }) throws -> Pipeline {
        try make(YAMLLoader.load(file: path), registry: registry, log: log, console: console, pluginPaths: pluginPaths, notes: notes)
    }

    /// ``load(_:registry:log:console:pluginPaths:notes:)`` on a parsed config.
    public static func make(_ root: ConfigNode, registry: PluginRegistry, log: Logger, console: Console = .standardOutput,
                            pluginPaths: [PluginPath] = [], notes: (String) -> Void = { _ in }) throws -> Pipeline {
        let config = try PipelineConfig(root: root, hostKeys: hostKeys)
        var configured: [PluginPath] = []
        if let block = try config.topLevel.section("plugins") {
            if let node = try block.node("paths"), case .sequence(let items) = node.value {
                for item in items {
                    guard case .scalar(let text, _) = item.value else { throw ConfigError("plugins: 'paths' must be a list of paths", at: item.location) }
                    configured.append(PluginPath(PluginOptions.expandingTilde(text), from: .config(item.location)))
                }
            } else if try block.node("paths") != nil {
                throw block.error("'paths' must be a list of paths, such as [~/.local/lib/shutterpipe]", key: "paths")
            }
            block.recordUnknownKeys()  // reported with the plugins' mistakes
        }
        let report = PluginLoader.load(configured + pluginPaths + PluginLoader.defaultPaths(), into: registry)
        report.notes.forEach(notes)
        if let refusal = report.refusals.first {
            if case .config(let location) = refusal.given?.source { throw ConfigError("\(refusal)", at: location) }
            throw PluginPathError(refusal: refusal)
        }
        var pipeline = try Pipeline(config: config, registry: registry, log: log, console: console)
        let catalogue = try CatalogueSetting(config, pipeline: pipeline)
        if let note = catalogue.note { notes(note) }
        if let sink = catalogue.sink(session: config.session, log: log) { pipeline.sinks.append(sink) }
        return pipeline
    }
}
