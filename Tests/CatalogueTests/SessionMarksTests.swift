#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import ShutterPipeCatalogue
import ShutterPipeKit
import TestSupport
import Testing

/// A file-stub session with stdin and socket triggers and a files sink into `photos`.
func socketPipeline(_ photos: String, socket: String, top: String = "") -> String {
    cataloguePipeline(photos, top: top).replacingOccurrences(of: "  - type: stdin\n", with: "  - type: stdin\n  - type: socket\n    path: \(socket)\n")
}

@Suite("catalogue: marks through a running session's socket", .timeLimit(.minutes(3)))
struct SessionMarksTests {
    @Test("shots rate, label, pick and keyword while the session shoots, one at a time between captures: they go through its socket, land in the sidecar (exiftool reads them) and the catalogue")
    func marksWhileShooting() async throws {
        let folder = TemporaryDirectory("catalogue-socket-marks")
        let socket = folder.file("s.sock")
        let config = try writeConfig(socketPipeline(folder.file("photos"), socket: socket), in: folder)
        let session = try await RunningProcess.start(program: try shutterpipeBinary(), ["run", "--config", config, "--verbose"], in: folder.path)
        let steps: [([String], rating: String?, label: String?, pick: String?)] = [
            (["rate", "4"], "4", nil, nil), (["label", "red"], "4", "Red", nil), (["pick"], "4", "Red", "1"), (["reject"], "4", "Red", "-1"),  // a reject keeps the stars editors show
        ]
        for (index, step) in steps.enumerated() {
            session.send("capture\n")
            await session.waitForOutput(on: .stdout, "answer \(index + 1)") { $0.split(separator: "\n").count >= index + 1 }
            // The record follows the answer on the catalogue's thread; its log line is the gate.
            await session.waitForOutput("\(index + 1) shot(s) recorded") { shotsRecorded(in: $0) >= index + 1 }
            let shot = try #require(try await listedShots(["--config", config], in: folder).first)
            let photo = try #require(shot.files.first?.path)
            // This shot gets the steps so far, in order, one command each.
            for earlier in steps[...index] {
                let marked = try await shutterpipe(["shots", "--config", config, earlier.0[0], "\(shot.id)"] + earlier.0.dropFirst(), in: folder.path)
                #expect(marked.status == 0 && marked.stdout.contains("(through the running session)"), "\(earlier.0): \(marked.stdout) \(marked.stderr)")
            }
            let tags = ungrouped(try await ExifTool.tags([photo + ".xmp"])[photo + ".xmp"] ?? [:])
            #expect(tags["Rating"] == step.rating && tags["Label"] == step.label && tags["Pick"] == step.pick, "\(step.0): \(tags)")
        }
        let keyworded = try await shutterpipe(["shots", "--config", config, "keyword", "1", "look 12"], in: folder.path)
        #expect(keyworded.status == 0 && keyworded.stdout.contains("keywords look 12"), "\(keyworded.stdout) \(keyworded.stderr)")
        let refused = try await shutterpipe(["shots", "--config", config, "rate", "999", "3"], in: folder.path)
        #expect(refused.status == 1 && refused.stderr.contains("no shot 999"), "\(refused.stderr)")
        session.signal(SIGTERM)  // the socket trigger runs until the session is stopped
        let outcome = await session.wait()
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("shot 1 marked"), "the session logs each mark: \(outcome.stderr)")
        let shots = try await listedShots(["--config", config], in: folder)
        #expect(shots.count == 4 && shots.first { $0.id == 1 }?.keywords == ["look 12"])
        #expect(shots.first { $0.id == 4 }?.pick == .rejected && shots.first { $0.id == 1 }?.rating == 4)
        // No session now: the same command marks the catalogue directly.
        let offline = try await shutterpipe(["shots", "--config", config, "rate", "2", "5"], in: folder.path)
        #expect(offline.status == 0 && !offline.stdout.contains("running session") && offline.stdout.contains("written to"), "\(offline.stdout)")
    }

    @Test("a session that keeps no catalogue refuses a mark with the fix")
    func noCatalogue() async throws {
        let folder = TemporaryDirectory("catalogue-socket-off")
        let socket = folder.file("s.sock")
        let config = try writeConfig(socketPipeline(folder.file("photos"), socket: socket, top: "catalogue: off"), in: folder)
        let session = try await RunningProcess.start(program: try shutterpipeBinary(), ["run", "--config", config, "--verbose"], in: folder.path)
        await session.waitForOutput("listening on \(socket)")
        let refused = try await shutterpipe(["shots", "--socket", socket, "rate", "1", "3"], in: folder.path)
        #expect(refused.status == 1 && refused.stderr.contains("keeps no catalogue"), "\(refused.stderr)")
        session.signal(SIGTERM)
        #expect(await session.wait().status == 0)
    }

    @Test("shots rate --catalogue PATH while a session holds that catalogue: the mark goes through the session (its log says so) whatever the option; a session without a socket refuses it with the reason and the catalogue is untouched; once the session ends, --catalogue marks it directly")
    func catalogueOptionReachesTheSession() async throws {
        let folder = TemporaryDirectory("catalogue-claimed")
        let socket = folder.file("s.sock")
        let file = folder.file("photos/.shutterpipe/catalogue.sqlite")
        let withSocket = try writeConfig(socketPipeline(folder.file("photos"), socket: socket), in: folder, name: "socket.yaml")
        var session = try await RunningProcess.start(program: try shutterpipeBinary(), ["run", "--config", withSocket, "--verbose"], in: folder.path)
        session.send("capture\n")
        await session.waitForOutput("1 shot recorded") { shotsRecorded(in: $0) >= 1 }
        let through = try await shutterpipe(["shots", "--catalogue", file, "rate", "1", "4"], in: folder.path)
        #expect(through.status == 0 && through.stdout.contains("(through the running session)"), "\(through.stdout) \(through.stderr)")
        await session.waitForOutput("the session logs the mark") { $0.contains("shot 1 marked: rating 4") }
        session.signal(SIGTERM)
        #expect(await session.wait().status == 0)

        // A session without a socket: nobody can reach it, so the mark is refused, not written behind its back.
        let noSocket = try writeConfig(cataloguePipeline(folder.file("photos")), in: folder, name: "stdin.yaml")
        session = try await RunningProcess.start(program: try shutterpipeBinary(), ["run", "--config", noSocket, "--verbose"], in: folder.path)
        session.send("capture\n")
        await session.waitForOutput("the second shot recorded") { shotsRecorded(in: $0) >= 1 }
        let refused = try await shutterpipe(["shots", "--catalogue", file, "rate", "2", "5"], in: folder.path)
        #expect(refused.status == 1 && refused.stderr.contains("holds the catalogue") && refused.stderr.contains("no socket trigger"), "\(refused.stderr)")
        session.closeInput()
        #expect(await session.wait().status == 0)
        let shots = try await listedShots(["--catalogue", file], in: folder)
        #expect(shots.first { $0.id == 2 }?.rating == 0 && shots.first { $0.id == 1 }?.rating == 4)
        let offline = try await shutterpipe(["shots", "--catalogue", file, "rate", "2", "5"], in: folder.path)
        #expect(offline.status == 0 && !offline.stdout.contains("running session"), "\(offline.stdout) \(offline.stderr)")
    }
}
