import Foundation
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
}
