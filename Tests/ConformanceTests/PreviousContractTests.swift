import Foundation
import ShutterPipeApp
import ShutterPipeConformance
import ShutterPipeKit
import TestSupport
import Testing

/// The contract evolves without breaking (docs/plugins.md, "How the contract evolves"):
/// the example plugin, built against the previous contract revision's SDK
/// (Tests/Fixtures/previous-contract.tar.xz), loads into today's host and passes today's
/// kit. Right after a major rise the previous revision is of the old major: then the
/// same plugin must be refused by name, before any of its code runs. (ContractGrowthTests
/// shows the next minor of today's major.)
@Suite("A plugin built against the previous contract revision", .timeLimit(.minutes(20)))
struct PreviousContractTests {
    @Test("of today's major: loads into today's host, declares what it declared then, and passes today's conformance kit; of the major before: refused, naming both contracts and the fix")
    func passesTodaysKit() async throws {
        let (contract, library) = try await previousContractPlugin()
        #expect(contract != "\(ShutterPipeSDK.contract)", "the fixture is today's contract: run scripts/snapshot-contract with the previous revision's last commit")
        let registry = PluginRegistry()
        guard contract.hasPrefix("\(ShutterPipeSDK.contract.major).") else {
            #expect(contract.hasPrefix("\(ShutterPipeSDK.contract.major - 1)."), "the fixture is neither of today's major nor of the one before: run scripts/snapshot-contract")
            let refusal = #expect(throws: PluginLoadError.self) { try PluginLoader.load(library, into: registry) }
            #expect(refusal?.reason == "built against contract \(contract) with \(ShutterPipeSDK.toolchain), but this shutterpipe \(ShutterPipeSDK.version) has contract \(ShutterPipeSDK.contract) with \(ShutterPipeSDK.toolchain); rebuild the plugin against this shutterpipe's SDK",
                    "\(String(describing: refusal))")
            #expect(registry.descriptors.isEmpty)
            return
        }
        try PluginLoader.load(library, into: registry)
        let descriptor = try #require(registry.descriptors.first { $0.type == "manifest" })
        #expect(descriptor.origin == .library(library) && descriptor.abilities.isEmpty)
        let folder = TemporaryDirectory("previous-contract")
        try Data().writeTestFile(folder.file("blocker"))
        @Sendable func sink(_ path: String) throws -> any PhotoSink {
            let spec = PluginSpec(kind: .sink, type: "manifest", typeLocation: SourceLocation(file: "test", line: 1, column: 1), name: "manifest",
                                  options: try PluginOptions(configNode(["path": path]), owner: "sink 'manifest'"))
            return try registry.makeSink(spec, environment: PluginEnvironment(session: "previous", instanceName: "manifest", log: Logger(source: "manifest") { _ in },
                                                                              console: .standardOutput))
        }
        let problems = await Conformance.checkSink({ try sink(folder.file("out/manifest.jsonl")) }, failing: { try sink(folder.file("blocker/manifest.jsonl")) })
        // Before contract 9.2 a receipt had no records: the example listed its manifest as
        // each photo's file, which today's kit names (and nothing else).
        let listedAsPhotos = problems.filter { $0.contains("belongs in the receipt's records") }
        #expect(contract != "9.1" || listedAsPhotos.count == 1, "\(problems)")
        #expect(problems.count == listedAsPhotos.count, "\(problems)")
    }
}
