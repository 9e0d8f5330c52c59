import Foundation
import ShutterPipeKit

/// `shutterpipe plugins`: the plugin types and commands, with where they come from.
struct PluginsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugins", abstract: "list the plugin types and the commands plugins add",
        discussion: """
        Lists the plugin contract this shutterpipe has (major.minor, and the Swift it was
        built with), then the plugin types: kind, type name, origin (built-in, or the library
        it came from), the abilities each declared (live view, camera settings, ...; one
        this shutterpipe does not know is marked "unknown") and what each does, then the
        commands plugins contribute. Libraries from
        --plugin-path and $SHUTTERPIPE_PLUGIN_PATH are loaded first; in a folder, files that
        are not plugins are skipped with a note; a refused library is reported and the
        command exits 1.
        """)

    @Option(valueName: "PATH", help: "load a plugin library, or the plugins in a folder, first")
    var pluginPath: [String] = []

    func run(_ context: CommandContext) async throws -> Int32 {
        let report = PluginLoader.load(pluginPath.map { PluginPath($0, from: .commandLine) } + PluginLoader.defaultPaths(),
                                       into: context.registry)
        for note in report.notes { context.errors.printLine("note: \(note)") }
        for refusal in report.refusals { context.errors.printLine("error: \(refusal.located)") }
        let registry = context.registry
        let rows = registry.descriptors.map { [$0.kind.rawValue, $0.type, $0.origin.description, Self.abilities($0), $0.summary] }
            + registry.commands.map { ["command", $0.name, $0.origin.description, "-", $0.command.configuration.abstract] }
        let header = ["KIND", "TYPE", "ORIGIN", "ABILITIES", "DESCRIPTION"]
        let widths = (0..<4).map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        context.output.printLine("shutterpipe \(ShutterPipeSDK.version): plugin contract \(ShutterPipeSDK.contract), \(ShutterPipeSDK.toolchain)")
        for row in [header] + rows {
            context.output.printLine((0..<4).map { row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ")
                                     + "  " + row[4])
        }
        return report.refusals.isEmpty ? ShutterPipeCLI.success : ShutterPipeCLI.runFailed
    }

    /// "liveView,cameraSettings", an unknown one as "name(unknown)", or "-".
    static func abilities(_ descriptor: PluginDescriptor) -> String {
        let names = descriptor.abilities.sorted().map { PluginAbility.known[$0] == nil ? "\($0)(unknown)" : $0.rawValue }
        return names.isEmpty ? "-" : names.joined(separator: ",")
    }
}
