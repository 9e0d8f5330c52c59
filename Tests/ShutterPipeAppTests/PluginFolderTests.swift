import Foundation
import ShutterPipeApp
import ShutterPipeKit
import ShutterPipeRuntime
import TestSupport
import Testing

/// Every built-in plugin folder under Plugins/ (the SDK and third-party examples aside).
let pluginFolders: [String] = {
    let root = "\(repositoryRoot)/Plugins"
    return ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
        .filter { !["SDK", "Examples"].contains($0) && !$0.hasPrefix(".") }
        .sorted()
}()

/// Every ready-to-run pipeline under Config/.
let shippedConfigs: [String] = {
    let root = "\(repositoryRoot)/Config"
    return ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).filter { $0.hasSuffix(".yaml") }.sorted()
}()

@Suite("Plugin folders and shipped configs stay true", .timeLimit(.minutes(2)))
struct PluginFolderTests {
    @Test("there are plugin folders and configs to check")
    func foldersExist() {
        #expect(pluginFolders.count >= 3)
        #expect(shippedConfigs.contains("default.yaml"))
    }

    @Test("each plugin's example.yaml is a valid pipeline", arguments: pluginFolders)
    func exampleValidates(folder: String) throws {
        let path = "\(repositoryRoot)/Plugins/\(folder)/example.yaml"
        let root = try YAMLLoader.load(file: path)
        _ = try Pipeline(config: PipelineConfig(root: root), registry: BuiltInPlugins.registry(), log: .discarding)
    }

    @Test("each plugin's README has the fixed shape and embeds example.yaml verbatim", arguments: pluginFolders)
    func readmeShape(folder: String) throws {
        let base = "\(repositoryRoot)/Plugins/\(folder)"
        let readme = try String(contentsOfFile: "\(base)/README.md", encoding: .utf8)
        let example = try String(contentsOfFile: "\(base)/example.yaml", encoding: .utf8)
        #expect(readme.hasPrefix("# "))
        var position = readme.startIndex
        for heading in ["## Configuration", "## States and errors", "## Troubleshooting", "## Example output"] {
            let found = try #require(readme.range(of: "\n\(heading)\n", range: position..<readme.endIndex),
                                     "README of \(folder) lacks '\(heading)' in order")
            position = found.upperBound
        }
        #expect(readme.contains("```yaml\n\(example)```"), "README of \(folder) must embed example.yaml verbatim")
    }

    @Test("every option in an example is documented in its README", arguments: pluginFolders)
    func optionsDocumented(folder: String) throws {
        let base = "\(repositoryRoot)/Plugins/\(folder)"
        let readme = try String(contentsOfFile: "\(base)/README.md", encoding: .utf8)
        let root = try YAMLLoader.load(file: "\(base)/example.yaml")
        let config = try PipelineConfig(root: root)
        // The README's title names the folder's own plugin: "# `files` sink".
        let title = try #require(readme.split(separator: "\n").first)
        let type = try #require(title.split(separator: "`").dropFirst().first.map(String.init))
        let specs = ([config.backend] + config.triggers + config.sinks).filter { $0.type == type }
        #expect(!specs.isEmpty, "example.yaml of \(folder) does not use \(type)")
        for spec in specs {
            for key in spec.options.keys where !["type", "name"].contains(key) {
                #expect(readme.contains("| `\(key)` |"), "README of \(folder) does not document '\(key)' of \(spec.type)")
            }
        }
    }

    @Test("each config in Config/ is valid", arguments: shippedConfigs)
    func shippedConfigValidates(name: String) throws {
        let root = try YAMLLoader.load(file: "\(repositoryRoot)/Config/\(name)")
        _ = try Pipeline(config: PipelineConfig(root: root), registry: BuiltInPlugins.registry(), log: .discarding)
    }
}
