import Foundation
import ShutterPipeKit
import TestSupport
import Testing

/// The command line as a new user types it, and the docs that describe it.
@Suite("The command line and its docs", .timeLimit(.minutes(2)))
struct CommandLineTests {
    @Test("run FILE works like run --config FILE and like validate FILE; two different configs are a usage mistake")
    func runTakesTheConfigAsAnArgument() async throws {
        let folder = TemporaryDirectory("run-file")
        let config = try writeConfig("version: 1\nbackend: {type: file-stub}\ntriggers: [{type: stdin}]\nsinks: [{type: files, directory: \(folder.file("out"))}]\n",
                                     in: folder)
        let positional = try await shutterpipe(["run", config], input: "capture\n", in: folder.path)
        #expect(positional.status == 0, "\(positional.stderr)")
        #expect(positional.lines.first?.hasPrefix("photoSuccess \(folder.file("out"))") == true, "\(positional.stdout)")
        let flag = try await shutterpipe(["run", "--config", config], input: "capture\n", in: folder.path)
        #expect(flag.status == 0 && flag.lines.first?.hasPrefix("photoSuccess") == true, "\(flag.stdout)\(flag.stderr)")
        let same = try await shutterpipe(["run", config, "--config", config], input: "capture\n", in: folder.path)
        #expect(same.status == 0, "\(same.stderr)")
        let other = try writeConfig("version: 1\nbackend: {type: file-stub}\ntriggers: [{type: stdin}]\nsinks: [{type: files}]\n", in: folder, name: "other.yaml")
        let two = try await shutterpipe(["run", config, other], input: "", in: folder.path)
        #expect(two.status == 2)
        #expect(two.stderr.contains("one config at a time"), "\(two.stderr)")
    }

    @Test("docs/architecture.md names every command --help lists")
    func architectureNamesEveryCommand() async throws {
        let help = try await shutterpipe(["--help"], in: TemporaryDirectory("help-commands").keep().path)
        let lines: [String] = help.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let listed: [String] = Array(lines.drop { $0 != "Commands:" }.dropFirst().prefix { $0.hasPrefix("  ") })
        let commands: [String] = listed.compactMap { $0.split(separator: " ").first.map(String.init) }.filter { $0 != "help" }
        #expect(commands.count >= 10, "\(help.stdout)")
        let architecture = try String(contentsOfFile: "\(repositoryRoot)/docs/architecture.md", encoding: .utf8)
        for command in commands {
            #expect(architecture.contains("`\(command)`") || architecture.contains("`shutterpipe \(command)"), "docs/architecture.md does not name the `\(command)` command")
        }
    }

    @Test("usage mistakes exit 2 with help on stderr", arguments: [
        ["run", "--bogus"], ["snap"], [], ["run", "--log-format", "xml"], ["validate"], ["run", "--config"],
    ])
    func usageErrors(arguments: [String]) async throws {
        let folder = TemporaryDirectory("usage")
        let outcome = try await shutterpipe(arguments, in: folder.path)
        #expect(outcome.status == 2)
        #expect(outcome.stdout.isEmpty)
        #expect(outcome.stderr.contains("Usage: shutterpipe"))
    }

    @Test("an unknown command suggests the closest")
    func unknownCommand() async throws {
        let outcome = try await shutterpipe(["rnu"], in: TemporaryDirectory("unknown").keep().path)
        #expect(outcome.stderr.contains("unknown command 'rnu'; did you mean 'run'?"))
    }

    @Test("run without a config outside a checkout says what to do")
    func noDefaultConfig() async throws {
        let outcome = try await shutterpipe(["run"], in: TemporaryDirectory("nodefault").keep().path)
        #expect(outcome.status == 3)
        #expect(outcome.stderr.contains("give one: shutterpipe run FILE"), "\(outcome.stderr)")
    }

    @Test("--help, help COMMAND and --version exit 0 on stdout", arguments: [
        (["--help"], "Commands:"), (["help", "run"], "--log-format"), (["run", "--help"], "--config FILE"),
        (["help", "validate"], "FILE:LINE:COLUMN"), (["plugins", "--help"], "plugin types"), (["--version"], "shutterpipe 0.1.0"),
    ])
    func help(arguments: [String], expected: String) async throws {
        let outcome = try await shutterpipe(arguments, in: TemporaryDirectory("help").keep().path)
        #expect(outcome.status == 0)
        #expect(outcome.stdout.contains(expected))
    }

    @Test("plugins names the contract and lists the built-in types with their origin, abilities and description")
    func plugins() async throws {
        let outcome = try await shutterpipe(["plugins"], in: TemporaryDirectory("plugins").keep().path)
        #expect(outcome.status == 0)
        #expect(outcome.lines.first == "shutterpipe \(ShutterPipeSDK.version): plugin contract \(ShutterPipeSDK.contract), \(ShutterPipeSDK.toolchain)")
        #expect(outcome.lines.dropFirst().first?.hasPrefix("KIND") == true)
        for (kind, type) in [("trigger", "stdin"), ("backend", "file-stub"), ("sink", "files")] {
            #expect(outcome.lines.contains { $0.hasPrefix(kind) && $0.contains(" \(type) ") && $0.contains("built-in") }, "\(outcome.stdout)")
        }
        #expect(outcome.lines.contains { $0.hasPrefix("backend") && $0.contains(" gphoto2 ") && $0.contains(" bulbCapture,cameraSettings,liveView ") }, "\(outcome.stdout)")
    }
}
