import Foundation
import ShutterPipeApp
import ShutterPipeKit
import ShutterPipeRuntime
import TestSupport
import Testing

/// Loads `yaml` as a whole pipeline through the built-in registry.
func pipeline(_ yaml: String, environment: [String: String] = [:]) throws -> Pipeline {
    let root = try YAMLLoader.parse(yaml, file: "studio.yaml", environment: environment)
    return try Pipeline(config: PipelineConfig(root: root), registry: BuiltInPlugins.registry(), log: .discarding)
}

/// The config error `yaml` produces; fails the test if there is none.
func configError(_ yaml: String, environment: [String: String] = [:], sourceLocation: Testing.SourceLocation = #_sourceLocation) -> ConfigError? {
    do {
        _ = try pipeline(yaml, environment: environment)
        Issue.record("expected a config error", sourceLocation: sourceLocation)
        return nil
    } catch let error as ConfigError {
        return error
    } catch {
        Issue.record("expected a ConfigError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

let valid = """
version: 1
session: portrait
backend:
  type: file-stub
triggers:
  - type: stdin
sinks:
  - type: files
    directory: /tmp/x
"""

@Suite("Config loading and its errors", .timeLimit(.minutes(2)))
struct ConfigTests {
    @Test("a valid config makes every plugin")
    func validConfig() throws {
        let made = try pipeline(valid)
        #expect(made.config.session == "portrait")
        #expect(made.triggers.map(\.name) == ["stdin"])
        #expect(made.sinks.map(\.name) == ["files"])
        #expect(made.config.coordinator == CoordinatorSettings())
    }

    @Test("the coordinator block sets every setting")
    func coordinatorBlock() throws {
        let made = try pipeline(valid + """

        coordinator:
          autoEnter: false
          queueLimit: 4
          enterTimeout: 5s
          captureTimeout: 2m
          storeTimeout: 1.5s
          exitTimeout: 500ms
          syncTimeout: 3
        """)
        let settings = made.config.coordinator
        #expect(settings.autoEnter == false)
        #expect(settings.queueLimit == 4)
        #expect(settings.enterTimeout == .seconds(5))
        #expect(settings.captureTimeout == .seconds(120))
        #expect(settings.storeTimeout == .milliseconds(1500))
        #expect(settings.exitTimeout == .milliseconds(500))
        #expect(settings.syncTimeout == .seconds(3))
    }

    @Test("a YAML syntax error names file, line and column")
    func syntaxError() {
        let error = configError("version: 1\nbackend:\n  type: file-stub\n   bad: [\n")
        #expect(error?.location?.file == "studio.yaml")
        #expect(error?.location?.line == 4)
        #expect(error?.description.hasPrefix("studio.yaml:4:") == true)
        #expect(error?.message.contains("YAML syntax error") == true)
    }

    @Test("tabs get a hint")
    func tabs() {
        let error = configError("version: 1\nbackend:\n\ttype: file-stub\n")
        #expect(error?.location?.line == 3)
        #expect(error?.message.contains("spaces, not tabs") == true)
    }

    @Test("an empty file says what a config needs")
    func emptyFile() {
        let error = configError("")
        #expect(error?.message.contains("empty") == true)
        #expect(error?.location != nil)
    }

    @Test("a missing key is named", arguments: [
        ("version", "missing key 'version'"), ("backend", "missing key 'backend'"),
        ("triggers", "missing key 'triggers'"), ("sinks", "missing key 'sinks'"),
    ])
    func missingKey(key: String, expected: String) {
        let lines = valid.split(separator: "\n", omittingEmptySubsequences: false)
        var kept: [Substring] = []
        var skipping = false
        for line in lines {
            if line.hasPrefix("\(key):") { skipping = true; continue }
            if skipping && line.hasPrefix(" ") { continue }
            skipping = false
            kept.append(line)
        }
        let error = configError(kept.joined(separator: "\n"))
        #expect(error?.message.contains(expected) == true, "\(String(describing: error))")
        #expect(error?.location?.line == 1)
    }

    @Test("a missing plugin type is named with the plugin")
    func missingType() {
        let error = configError(valid.replacingOccurrences(of: "  - type: stdin", with: "  - name: remote"))
        #expect(error?.message == "trigger 1: missing key 'type'")
        #expect(error?.location?.line == 6)
    }

    @Test("an unsupported version says which one this build reads")
    func wrongVersion() {
        let error = configError(valid.replacingOccurrences(of: "version: 1", with: "version: 2"))
        #expect(error?.message.contains("version 2 is not supported") == true)
        #expect(error?.location?.line == 1 && error?.location?.column == 10)
    }

    @Test("an unknown plugin type suggests the closest and lists the known ones")
    func unknownType() {
        let error = configError(valid.replacingOccurrences(of: "type: files", with: "type: filez"))
        #expect(error?.message.hasPrefix("unknown sink type 'filez'; did you mean 'files'?; known sink types: command, files, upload. ") == true)
        #expect(error?.message.contains("--plugin-path PATH, the config's plugins.paths, or $SHUTTERPIPE_PLUGIN_PATH") == true)
        #expect(error?.location?.line == 8 && error?.location?.column == 11)
        let backend = configError(valid.replacingOccurrences(of: "type: file-stub", with: "type: canon"))
        #expect(backend?.message.contains("known backend types: file-stub") == true)
    }

    @Test("an unknown key is an error with a did-you-mean", arguments: [
        ("sesion: x\n", "config: unknown key 'sesion'; did you mean 'session'?", 10),
        ("coordinator:\n  queueLimt: 3\n", "config 'coordinator': unknown key 'queueLimt'; did you mean 'queueLimit'?", 11),
    ])
    func unknownTopLevelKey(extra: String, message: String, line: Int) {
        let error = configError(valid + "\n" + extra)
        #expect(error?.message == message)
        #expect(error?.location?.line == line)
    }

    @Test("an unknown plugin option names the plugin and suggests the option")
    func unknownPluginOption() {
        let error = configError(valid.replacingOccurrences(of: "    directory: /tmp/x", with: "    directroy: /tmp/x"))
        #expect(error?.message == "sink 'files': unknown key 'directroy'; did you mean 'directory'?")
        #expect(error?.location?.line == 9 && error?.location?.column == 5)
    }

    @Test("a wrong type names the expected type", arguments: [
        ("queueLimit: lots", "'queueLimit' must be an integer; got 'lots'"),
        ("autoEnter: maybe", "'autoEnter' must be true or false; got 'maybe'"),
        ("captureTimeout: soon", "'captureTimeout' must be a duration such as 500ms, 2s or 1m (at most a year); got 'soon'"),
        // Found by the config fuzz: this used to crash converting to Int64.
        ("captureTimeout: 99999999999999999999s", "'captureTimeout' must be a duration such as 500ms, 2s or 1m (at most a year); got '99999999999999999999s'"),
        ("queueLimit: [1, 2]", "'queueLimit' must be an integer; got a list"),
        ("queueLimit: -1", "'queueLimit' must be between 0 and 100000; got -1"),
    ])
    func wrongType(line: String, message: String) {
        let error = configError(valid + "\ncoordinator:\n  \(line)\n")
        #expect(error?.message == "config 'coordinator': \(message)")
        #expect(error?.location?.line == 11)
        #expect(error?.location?.column == line.firstIndex(of: ":")!.utf16Offset(in: line) + 5)
    }

    @Test("lists and maps where the other is expected")
    func shapeErrors() {
        #expect(configError(valid.replacingOccurrences(of: "triggers:\n  - type: stdin", with: "triggers:\n  type: stdin"))?
            .message == "config: 'triggers' must be a list (- type: stdin); got a map")
        #expect(configError(valid.replacingOccurrences(of: "triggers:\n  - type: stdin", with: "triggers: []"))?
            .message == "config: 'triggers' needs at least one entry (- type: stdin)")
        #expect(configError(valid.replacingOccurrences(of: "backend:\n  type: file-stub", with: "backend: file-stub"))?
            .message == "backend must be a map of options, got a scalar")
        #expect(configError("- 1\n- 2\n")?.message == "config must be a map of options, got a list")
    }

    @Test("duplicate keys and duplicate names are errors")
    func duplicates() {
        let key = configError(valid + "\nsession: again\n")
        #expect(key?.message == "duplicate key 'session' (first at line 2, column 1)")
        #expect(key?.location?.line == 10)
        let names = configError(valid + "\n  - type: files\n    name: files\n    directory: /tmp/y\n")
        #expect(names?.message == "sink name 'files' is used twice; give each sink its own name")
    }

    @Test("repeated plugin types get distinct names")
    func repeatedTypes() throws {
        let made = try pipeline(valid + "\n  - type: files\n    directory: /tmp/y\n")
        #expect(made.sinks.map(\.name) == ["files", "files-2"])
    }

    @Test("${VAR} and ${VAR:-default} expand; an unset variable is an error")
    func environmentExpansion() throws {
        let yaml = valid.replacingOccurrences(of: "session: portrait", with: "session: ${CLIENT}-${SHOOT:-day1}")
        #expect(try pipeline(yaml, environment: ["CLIENT": "acme"]).config.session == "acme-day1")
        #expect(try pipeline(yaml, environment: ["CLIENT": "acme", "SHOOT": "day2"]).config.session == "acme-day2")
        let error = configError(yaml)
        #expect(error?.message == "environment variable 'CLIENT' is not set; set it, or write '${CLIENT:-default}'")
        #expect(error?.location?.line == 2 && error?.location?.column == 10)
        #expect(configError(valid.replacingOccurrences(of: "session: portrait", with: "session: ${OOPS"))?
            .message.contains("without a closing") == true)
    }

    @Test("~ expands to the home folder in paths")
    func tildeExpansion() {
        let home = ProcessInfo.processInfo.environment["HOME"] ?? ""
        #expect(PluginOptions.expandingTilde("~/Shoots") == home + "/Shoots")
        #expect(PluginOptions.expandingTilde("~") == home)
        #expect(PluginOptions.expandingTilde("./~x") == "./~x")
    }

    @Test("aliases work and unknown aliases are errors")
    func aliases() throws {
        let yaml = "version: 1\nsession: &name studio\nbackend: {type: file-stub, camera: *name}\ntriggers: [{type: stdin}]\nsinks: [{type: files}]\n"
        #expect(try pipeline(yaml).config.session == "studio")
        #expect(configError(yaml.replacingOccurrences(of: "*name", with: "*nope"))?.message.contains("unknown alias") == true)
    }

    @Test("a second document is refused")
    func twoDocuments() {
        #expect(configError(valid + "\n---\nversion: 1\n")?.message.contains("one YAML document") == true)
    }

    @Test("a missing file names the file")
    func missingFile() {
        #expect(throws: ConfigError.self) { try YAMLLoader.load(file: "/nonexistent/studio.yaml") }
        do {
            _ = try YAMLLoader.load(file: "/nonexistent/studio.yaml")
        } catch {
            #expect(String(describing: error).contains("cannot open config '/nonexistent/studio.yaml': no such file"))
        }
    }

    @Test("durations parse in every unit")
    func durations() {
        #expect(PluginOptions.parseDuration("250ms") == .milliseconds(250))
        #expect(PluginOptions.parseDuration("2s") == .seconds(2))
        #expect(PluginOptions.parseDuration("1.5s") == .milliseconds(1500))
        #expect(PluginOptions.parseDuration("2m") == .seconds(120))
        #expect(PluginOptions.parseDuration("1h") == .seconds(3600))
        #expect(PluginOptions.parseDuration("3") == .seconds(3))
        #expect(PluginOptions.parseDuration("-1s") == nil)
        #expect(PluginOptions.parseDuration("fast") == nil)
    }
}
