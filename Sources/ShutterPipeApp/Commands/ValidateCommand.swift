import ShutterPipeKit
import ShutterPipeRuntime
import ShutterPipeSupport

/// `shutterpipe validate`: checks configs without running them.
struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate", abstract: "check a config without running it",
        discussion: """
        Checks a config: its YAML, every key, every plugin's options. Prints 'FILE: ok' and
        exits 0, or prints each problem as FILE:LINE:COLUMN: message and exits 3. A pipeline
        whose sinks keep no copy of the photos gets a note: its shots stay on the camera's
        card. Opens no camera, device or file.
        """)

    @Argument(valueName: "FILE", help: "the configs to check")
    var files: [String] = []

    @Option(valueName: "PATH", help: "load a plugin library, or the plugins in a folder, first")
    var pluginPath: [String] = []

    func run(_ context: CommandContext) async throws -> Int32 {
        guard !files.isEmpty else { throw UsageError("name the config file to check") }
        var code = ShutterPipeCLI.success
        for path in files {
            do {
                let pipeline = try PipelineLoader.load(path, registry: context.registry, log: .discarding,
                                                       pluginPaths: pluginPath.map { PluginPath($0, from: .commandLine) }) {
                    context.errors.printLine("note: \($0)")
                }
                context.output.printLine("\(path): ok")
                if !pipeline.archivesPhotos {
                    let names = pipeline.sinks.map(\.name).joined(separator: ", ")
                    context.output.printLine("\(path): note: no sink keeps the photos (\(names) only \(pipeline.sinks.count == 1 ? "acts" : "act") on them): every shot stays on the camera's card; add a files sink to keep them on disk")
                }
            } catch let error as ConfigError {
                context.errors.printLine("error: \(error)")
                code = ShutterPipeCLI.configError
            } catch let errors as ConfigErrors {
                context.errors.printLine("\(errors)")
                code = ShutterPipeCLI.configError
            } catch let error as PluginPathError {
                context.errors.printLine("shutterpipe validate: \(error)")
                return ShutterPipeCLI.runFailed
            }
        }
        return code
    }
}
