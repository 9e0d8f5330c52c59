import Foundation
@testable import ShutterPipeApp
import ShutterPipeKit
import Testing

/// Options declared once and used by several commands (contract 10.2): parsed and shown
/// in the help as the command's own.
@Suite("command line: option groups")
struct OptionGroupTests {
    struct Address: ParsableArguments {
        @Option(valueName: "PATH", help: "the session's socket")
        var socket: String = "/run/default.sock"

        @Option(valueName: "DURATION", help: "how long to wait")
        var timeout: Duration = .seconds(30)

        @Flag(help: "print JSON")
        var json = false
    }

    struct Ask: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "ask", abstract: "ask a session")

        @Argument(valueName: "KEY", help: "what to ask")
        var key: String

        @OptionGroup var address: Address

        @Option(valueName: "NAME", help: "the camera")
        var camera: String?

        func run(_ context: CommandContext) async throws -> Int32 { CommandContext.success }
    }

    struct Twice: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "twice", abstract: "declares --json twice")

        @OptionGroup var address: Address

        @Flag(help: "print JSON too")
        var json = false

        func run(_ context: CommandContext) async throws -> Int32 { CommandContext.success }
    }

    @Test("a group's options parse into the group, beside the command's own, in any order")
    func parses() throws {
        let parsed = try CommandParser.parse(Ask.self, ["iso", "--timeout", "5s", "--camera", "left", "--json", "--socket=/tmp/s"])
        let ask = try #require(parsed as? Ask)
        #expect(ask.key == "iso")
        #expect(ask.camera == "left")
        #expect(ask.address.socket == "/tmp/s")
        #expect(ask.address.timeout == .seconds(5))
        #expect(ask.address.json)
        // Untouched, each is its default; a second command has a group of its own.
        let plain = try #require(try CommandParser.parse(Ask.self, ["iso"]) as? Ask)
        #expect(plain.address.socket == "/run/default.sock" && plain.address.timeout == .seconds(30) && !plain.address.json)
    }

    @Test("a group's mistakes are said as the command's own, and its options are in the help")
    func mistakesAndHelp() {
        #expect(throws: UsageError("--timeout must be a duration such as 500ms, 2s or 1m; got 'soon'")) {
            try CommandParser.parse(Ask.self, ["iso", "--timeout", "soon"])
        }
        let help = CommandHelp.help(Ask.self)
        for line in ["--socket", "--timeout", "--json", "--camera"] { #expect(help.contains(line), "\(help)") }
    }

    @Test("an option declared by the command and by its group is the command's mistake, by name")
    func declaredTwice() {
        #expect(throws: UsageError("the command 'twice' declares --json twice (itself and an option group, say); its plugin must name one of them otherwise")) {
            try CommandParser.parse(Twice.self, [])
        }
    }
}
