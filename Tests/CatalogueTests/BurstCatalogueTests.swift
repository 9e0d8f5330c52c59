#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import ShutterPipeCatalogue
import ShutterPipeKit
import TestSupport
import Testing

@Suite("catalogue: bursts", .timeLimit(.minutes(3)))
struct BurstCatalogueTests {
    @Test("a burst of 120 captures fed at once: shots recorded mid-burst wait for their digests, which come once the session is quiet, each equal to sha256sum's")
    func digestsAfterBurst() async throws {
        let folder = TemporaryDirectory("catalogue-burst")
        let config = try writeConfig(cataloguePipeline(folder.file("photos"), top: "coordinator:\n  queueLimit: 200"), in: folder)
        let session = try RunningProcess(program: try shutterpipeBinary(), ["run", "--config", config, "--verbose"], in: folder.path)
        session.send(String(repeating: "capture\n", count: 120))
        await session.waitForOutput(on: .stdout, "120 answers", timeout: .seconds(120)) { $0.split(separator: "\n").count >= 120 }
        #expect(session.stdoutSoFar.split(separator: "\n").allSatisfy { $0.hasPrefix("photoSuccess") })
        #expect(session.stderrSoFar.contains("recorded mid-burst"), "100 shots waited before the session was quiet: \(session.lastLines())")
        // While the session runs, quiet now: every shot recorded, every digest filled in.
        #expect(await eventually(timeout: .seconds(60)) {
            let shots = (try? await listedShots(["--config", config], in: folder)) ?? []
            return shots.count == 120 && shots.allSatisfy { $0.files.count == 1 && $0.files[0].sha256 != nil }
        }, "\(session.lastLines())")
        let shots = try await listedShots(["--config", config], in: folder)
        for shot in shots.filter({ $0.id % 12 == 1 }) {
            let file = try #require(shot.files.first)
            #expect(file.sha256 == (try await sha256sum(file.path)), "shot \(shot.id)")
        }
        session.closeInput()
        #expect(await session.wait().status == 0)
    }
}
