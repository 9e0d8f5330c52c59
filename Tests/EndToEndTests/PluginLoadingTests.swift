import Foundation
import ShutterPipeKit
import TestSupport
import Testing

/// A C shared library with the given source, standing in for a broken plugin.
func cLibrary(_ source: String, named name: String, in folder: TemporaryDirectory) async throws -> String {
    let c = folder.file("\(name).c"), library = folder.file("lib\(name).so")
    try source.writeTestFile(c)
    let result = try await runProgram(["cc", "-shared", "-fPIC", "-o", library, c])
    #expect(result.status == 0)
    return library
}

@Suite("Runtime plugins", .timeLimit(.minutes(3)))
struct PluginLoadingTests {
    @Test("the example plugin loads from a config's plugins.paths and works end to end")
    func examplePluginRuns() async throws {
        let library = try await examplePlugin()
        let folder = TemporaryDirectory("plugin-run")
        let config = try writeConfig("""
        version: 1
        plugins:
          paths: [\(library)]
        backend:
          type: file-stub
        triggers:
          - type: stdin
        sinks:
          - type: files
            directory: \(folder.file("out"))
          - type: manifest
            path: \(folder.file("out/manifest.jsonl"))
        """, in: folder)
        let outcome = try await shutterpipe(["run", "--config", config], input: "capture\ncapture\n", in: folder.path)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let successes = outcome.lines.filter { $0.hasPrefix("photoSuccess") }
        #expect(successes.count == 2)
        // The manifest is the sink's own record, not a file of either photo.
        #expect(successes.allSatisfy { $0.contains(folder.file("out")) && !$0.contains("manifest.jsonl") }, "\(successes)")
        let lines = try String(contentsOfFile: folder.file("out/manifest.jsonl"), encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        for line in lines {
            let record = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let stored = try #require(record["stored"] as? String)
            let sum = try await runProgram(["sha256sum", stored]).text.split(separator: " ").first.map(String.init)
            #expect(record["sha256"] as? String == sum)  // the untagged photo is the camera's bytes
        }
    }

    @Test("plugins lists loaded types with the library they came from; the environment variable works too")
    func listing() async throws {
        let library = try await examplePlugin()
        let folder = TemporaryDirectory("plugin-list")
        let flag = try await shutterpipe(["plugins", "--plugin-path", library], in: folder.path)
        #expect(flag.status == 0)
        #expect(flag.lines.contains { $0.hasPrefix("sink") && $0.contains(" manifest ") && $0.contains(library) && $0.contains("SHA-256") })
        let environment = try await shutterpipe(["plugins"], in: folder.path, environment: ["SHUTTERPIPE_PLUGIN_PATH": (library as NSString).deletingLastPathComponent])
        #expect(environment.lines.contains { $0.contains(" manifest ") })
    }

    @Test("refusals name the file and the reason, and never crash", arguments: ["missing", "notPlugin", "noEntry", "previousABI", "noContractEntry", "oldContractSymbol",
                                                                              "newerMinor", "otherMajor", "otherToolchain", "duplicate"])
    func refusals(kind: String) async throws {
        let folder = TemporaryDirectory("plugin-refuse")
        let path: String
        let expected: String
        switch kind {
        case "missing":
            path = folder.file("libnothere.so")
            expected = "refused: no such file"
        case "notPlugin":
            path = "/usr/lib/x86_64-linux-gnu/libyaml-0.so.2"
            expected = "refused: not a shutterpipe plugin: it exports no shutterpipe_plugin_abi/shutterpipe_plugin_entry"
        case "noEntry":
            path = try await cLibrary("int shutterpipe_plugin_abi(void) { return 1; }\n", named: "noentry", in: folder)
            expected = "refused: not a shutterpipe plugin"
        case "previousABI":  // a plugin built before contracts could evolve (ABI 8, matched exactly)
            path = try await cLibrary("int shutterpipe_plugin_abi(void) { return 8; }\nint shutterpipe_plugin_entry(void *c) { return 0; }\n",
                                      named: "abi8", in: folder)
            expected = "refused: built against plugin ABI 8, before contract 9 (it exports no shutterpipe_plugin_contract), but this shutterpipe \(ShutterPipeSDK.version) has contract \(ShutterPipeSDK.contract) with \(ShutterPipeSDK.toolchain); rebuild the plugin against this shutterpipe's SDK"
        case "noContractEntry":  // ABI 9 said, the contract's entry point missing: hand-written entry points
            path = try await cLibrary("int shutterpipe_plugin_abi(void) { return 9; }\nint shutterpipe_plugin_entry(void *c) { return 0; }\n",
                                      named: "nocontract", in: folder)
            expected = "refused: it says plugin ABI 9 but exports no shutterpipe_plugin_contract, the entry point every plugin since contract 9 has"
        case "oldContractSymbol":  // a plugin whose Swift code needs a part of the contract this one has not
            path = try await cLibrary("""
                extern int $s14ShutterPipeKit12RemovedThingV(void);
                int shutterpipe_plugin_abi(void) { return 8; }
                int shutterpipe_plugin_entry(void *c) { return $s14ShutterPipeKit12RemovedThingV(); }
                """, named: "oldsymbol", in: folder)
            expected = "refused: built against another plugin contract than this shutterpipe's: it needs a part of ShutterPipeKit that this shutterpipe \(ShutterPipeSDK.version) has contract \(ShutterPipeSDK.contract)"
        case "newerMinor", "otherMajor", "otherToolchain":
            let contract = ShutterPipeSDK.contract, swift = ShutterPipeSDK.toolchain
            let (major, minor, toolchain): (Int32, Int32, Int32) = kind == "newerMinor" ? (contract.major, contract.minor + 1, swift.packed)
                : kind == "otherMajor" ? (contract.major + 1, 0, swift.packed) : (contract.major, contract.minor, swift.packed - 1)
            let handshake = PluginEntry.pack(major: major, minor: minor, toolchain: toolchain)
            path = try await cLibrary("""
                int shutterpipe_plugin_abi(void) { return \(major); }
                long long shutterpipe_plugin_contract(void) { return \(handshake)LL; }
                int shutterpipe_plugin_entry(void *c) { return 0; }
                """, named: kind, in: folder)
            let plugin = "built against contract \(major).\(minor) with \(SwiftToolchain(packed: toolchain))"
            expected = "refused: \(plugin), but this shutterpipe \(ShutterPipeSDK.version) has contract \(ShutterPipeSDK.contract) with \(ShutterPipeSDK.toolchain); " + (kind == "newerMinor"
                ? "upgrade shutterpipe to one with contract \(major).\(minor) or later, or rebuild the plugin against this shutterpipe's SDK"
                : kind == "otherMajor" ? "rebuild the plugin against this shutterpipe's SDK"
                : "Swift has no stable ABI across compilers on Linux: rebuild the plugin with \(swift)")
        default:
            let library = try await examplePlugin()
            path = folder.file("libcopy.so")
            try copyTestFile(library, to: path)
            let outcome = try await shutterpipe(["plugins", "--plugin-path", library, "--plugin-path", path], in: folder.path)
            #expect(outcome.status == 1)
            #expect(outcome.stderr.contains("plugin '\(path)' refused: sink type 'manifest' is already registered (\(library))"), "\(outcome.stderr)")
            #expect(outcome.lines.contains { $0.contains(" manifest ") })  // the first one stays
            return
        }
        let outcome = try await shutterpipe(["plugins", "--plugin-path", path], in: folder.path)
        #expect(outcome.status == 1)
        #expect(outcome.stderr.contains("plugin '\(path)' \(expected)"), "\(outcome.stderr)")
        #expect(outcome.lines.contains { $0.hasPrefix("KIND") } && outcome.lines.contains { $0.contains(" file-stub ") })  // the built-ins are still listed
        // In a config, the refusal is a config error at the paths entry.
        let config = try writeConfig("version: 1\nplugins:\n  paths: [\(path)]\nbackend: {type: file-stub}\ntriggers: [{type: stdin}]\nsinks: [{type: files}]\n", in: folder)
        let run = try await shutterpipe(["validate", config], in: folder.path)
        #expect(run.status == 3)
        #expect(run.stderr.hasPrefix("error: \(config):3:11: plugin '\(path)' refused"), "\(run.stderr)")
    }

    @Test("--plugin-path on a SwiftPM build folder loads the plugin and skips the SDK's own library and other non-plugins, each with a note")
    func buildFolder() async throws {
        let library = try await examplePlugin()
        let buildFolder = (library as NSString).deletingLastPathComponent
        #expect(FileManager.default.fileExists(atPath: "\(buildFolder)/libShutterPipeKit.so"))  // as in every SwiftPM build folder
        let folder = TemporaryDirectory("plugin-folder")
        let plugins = folder.file("plugins")
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: true)
        for name in ["libShutterPipeKit.so", "libShutterPipeManifest.so"] {
            try copyTestFile("\(buildFolder)/\(name)", to: "\(plugins)/\(name)")
        }
        let yaml = URL(fileURLWithPath: "/usr/lib/x86_64-linux-gnu/libyaml-0.so.2").resolvingSymlinksInPath().path
        try copyTestFile(yaml, to: "\(plugins)/libyaml.so")  // a library, not a plugin
        try FileManager.default.createSymbolicLink(atPath: "\(plugins)/libgone.so", withDestinationPath: "libgone.so.1")
        // A link to a plugin that is not there is a refusal that says so; the rest still load.
        let broken = try await shutterpipe(["plugins", "--plugin-path", plugins], in: folder.path)
        #expect(broken.status == 1)
        #expect(broken.stderr.contains("--plugin-path \(plugins): plugin '\(plugins)/libgone.so' refused: a symbolic link to 'libgone.so.1', which does not exist"),
                "\(broken.stderr)")
        #expect(broken.lines.contains { $0.contains(" manifest ") })
        try FileManager.default.removeItem(atPath: "\(plugins)/libgone.so")
        let listed = try await shutterpipe(["plugins", "--plugin-path", plugins], in: folder.path)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.lines.contains { $0.contains(" manifest ") && $0.contains("\(plugins)/libShutterPipeManifest.so") }, "\(listed.stdout)")
        #expect(listed.stderr.contains("note: skipped \(plugins)/libShutterPipeKit.so: the SDK's own library, not a plugin"), "\(listed.stderr)")
        #expect(listed.stderr.contains("note: skipped \(plugins)/libyaml.so: not a shutterpipe plugin"), "\(listed.stderr)")
        // The build folder itself works the same, for run and validate alike.
        let config = try writeConfig("version: 1\nbackend: {type: file-stub}\ntriggers: [{type: stdin}]\nsinks: [{type: files, directory: \(folder.file("out"))}, {type: manifest, path: \(folder.file("m.jsonl"))}]\n", in: folder)
        let validated = try await shutterpipe(["validate", config, "--plugin-path", buildFolder], in: folder.path)
        #expect(validated.status == 0, "\(validated.stderr)")
        let ran = try await shutterpipe(["run", "--config", config, "--plugin-path", buildFolder], input: "capture\n", in: folder.path)
        #expect(ran.status == 0 && ran.lines.first?.hasPrefix("photoSuccess") == true, "\(ran.stdout)\(ran.stderr)")
    }

    @Test("a refused plugin from the command line or the environment names that, not a place in the config")
    func refusalNamesItsSource() async throws {
        let folder = TemporaryDirectory("plugin-source")
        let config = try writeConfig("version: 1\nbackend: {type: file-stub}\ntriggers: [{type: stdin}]\nsinks: [{type: files}]\n", in: folder)
        let missing = folder.file("libmissing.so")
        for command in [["validate", config, "--plugin-path", missing], ["run", "--config", config, "--plugin-path", missing]] {
            let outcome = try await shutterpipe(command, in: folder.path)
            #expect(outcome.status == 1, "\(command): \(outcome.stderr)")
            #expect(outcome.stderr.contains("--plugin-path \(missing): plugin '\(missing)' refused: no such file"), "\(outcome.stderr)")
            #expect(!outcome.stderr.contains("\(config):1:1"), "\(outcome.stderr)")
        }
        let environment = try await shutterpipe(["validate", config], in: folder.path, environment: ["SHUTTERPIPE_PLUGIN_PATH": missing])
        #expect(environment.status == 1)
        #expect(environment.stderr.contains("SHUTTERPIPE_PLUGIN_PATH entry '\(missing)': plugin '\(missing)' refused: no such file"), "\(environment.stderr)")
    }

    @Test("a plugin with its own copy of the core refuses to register")
    func foreignCore() {
        var message = [UInt8](repeating: 0, count: 512)
        let registry = PluginRegistry()
        let code = message.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var context: [UInt64] = [UInt64(ShutterPipeSDK.abi), ShutterPipeSDK.coreIdentity &+ 8,
                                     UInt64(UInt(bitPattern: Unmanaged.passUnretained(registry).toOpaque())),
                                     UInt64(UInt(bitPattern: buffer.baseAddress)), UInt64(buffer.count)]
            return context.withUnsafeMutableBytes { raw in
                PluginEntry.register(raw.baseAddress!) { registry in
                    try registry.registerSink("never", summary: "") { _, _ in fatalError("not reached") }
                }
            }
        }
        #expect(code == PluginEntry.foreignCore)
        #expect(String(decoding: message.prefix { $0 != 0 }, as: UTF8.self).hasPrefix("carries its own copy of ShutterPipeKit"))
        #expect(registry.descriptors.isEmpty)
    }
}
