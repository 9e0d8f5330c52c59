#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeKit
import Testing
import TestSupport

/// The lines of the virtual camera's `--verbose` log that name operation `code` (`0x100e`
/// InitiateCapture, `0x100b` DeleteObject), in order, as positions in its log.
func operations(_ code: String, in log: String) -> [Int] {
    log.components(separatedBy: "\n").enumerated().filter { $0.element.contains("op \(code)") }.map(\.offset)
}

/// The deletes a camera's worker still has to do, as it keeps them on disk.
func pendingDeletes(in settingsFolder: String, camera: String = "camera") -> [String] {
    guard let data = FileManager.default.contents(atPath: "\(settingsFolder)/\(camera)/pending-card-deletes.json"),
          let entries = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else { return [] }
    return entries.compactMap { ($0["path"] as? [String: Any])?["name"] as? String }
}

@Suite("card deletes wait for a pause, and survive a killed worker (real libgphoto2)", .timeLimit(.minutes(3)))
struct CardDeletesTests {
    @Test("a burst goes first: no card delete between its shots; the stored shots are deleted once the camera is idle, and the card is empty at exit")
    func burstGoesFirst() async throws {
        // libgphoto2's own reading of a card slow to delete: the CLI deletes what it downloaded.
        let reference = try await FakeCamera(["--delete-delay", "100ms"])
        let cli = try await reference.gphoto2(["--capture-image-and-download", "--filename", reference.home.file("cli.jpg")])
        #expect(cli.status == 0 && cli.text.contains("Deleting file"), "\(cli.text)\n\(cli.errors)")
        #expect(try await reference.filesOnCard().isEmpty)
        await reference.stop()

        let camera = try await FakeCamera(["--verbose", "--delete-delay", "100ms"])
        let folder = TemporaryDirectory("burst-deletes")
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out")), in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        #expect(await shoot(session, "enter", answers: 1).last == "enteredPhotoMode", "\(session.stderrSoFar)")
        // A photographer holding the remote: eight captures queued at once.
        session.send(String(repeating: "capture\n", count: 8))
        #expect(await eventually { answerLines(session).count >= 9 }, "\(session.stderrSoFar.suffix(2000))")
        #expect(answerLines(session).dropFirst().allSatisfy { $0.hasPrefix("photoSuccess") }, "\(answerLines(session))")
        // Once the camera is idle, every stored shot is deleted.
        #expect(await eventually { operations("0x100b", in: camera.logText).count >= 8 }, "\(camera.logText.suffix(2000))")
        let log = camera.logText
        let captures = operations("0x100e", in: log), deletes = operations("0x100b", in: log)
        #expect(captures.count == 8 && (deletes.first ?? 0) > (captures.last ?? .max), "a delete ran between the shots of the burst")
        session.send("exit\n")
        session.closeInput()
        #expect(await session.wait(timeout: .seconds(30)).status == 0)
        #expect(try await camera.filesOnCard().isEmpty)
    }

    @Test("deletes asked for while the next exposure runs are kept on disk: the worker killed with -9 then, its successor deletes them once the camera is idle, though the camera's clock is not the computer's")
    func survivesAKilledWorker() async throws {
        let folder = TemporaryDirectory("durable-deletes")
        let gate = try FileGate(in: folder)
        // Its clock an hour ahead: the successor reads the camera's time of each file, the
        // first worker had libgphoto2's (the computer's) for what the captures brought.
        let camera = try await FakeCamera(["--verbose", "--gate", gate.path, "--clock-offset", "3667"])
        let settings = folder.file("cameras")
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out"), backend: "  settingsFolder: \(settings)"), in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        #expect(await shoot(session, "enter", answers: 1).last == "enteredPhotoMode", "\(session.stderrSoFar)")
        // Shots 1 and 2 are let through; shot 3 waits at the camera's gate, so the worker is
        // inside a capture, never idle, from shot 1 until it is killed.
        try gate.release(2)
        session.send(String(repeating: "capture\n", count: 3))
        await camera.waitForLog("capture 3 waits at the gate")
        #expect(await eventually { answerLines(session).count >= 3 }, "\(session.stderrSoFar.suffix(2000))")
        #expect(await eventually { pendingDeletes(in: settings).count == 2 }, "the deletes were not kept: \(pendingDeletes(in: settings))")
        #expect(operations("0x100b", in: camera.logText).isEmpty, "a delete ran during the burst")
        let workers = try await workerPIDs(of: session)
        try #require(workers.count == 1)
        kill(workers[0], SIGKILL)
        // Shot 3 fails with the worker; its exposure, let go now, is stored as a shot from
        // the camera by the next worker, or stays on the card.
        #expect(await eventually { answerLines(session).count >= 4 }, "\(session.stderrSoFar.suffix(2000))")
        #expect(answerLines(session).last?.hasPrefix("photoFailed cameraFailure") == true, "\(answerLines(session))")
        try gate.release()
        #expect(await eventually { pendingDeletes(in: settings).isEmpty }, "\(pendingDeletes(in: settings)) \(session.stderrSoFar.suffix(2000))")
        #expect(operations("0x100b", in: camera.logText).count >= 2)
        session.send("exit\n")
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(30))
        let stored = folder.names("out").filter { $0.hasSuffix(".jpg") }.count
        let onCard = try await camera.filesOnCard()
        #expect(stored >= 2 && stored + onCard.count == 3, "\(stored) stored, on the card: \(onCard)\n\(outcome.stderr.suffix(2000))")
        #expect(!onCard.contains("IMG_0001.JPG") && !onCard.contains("IMG_0002.JPG"), "\(onCard)")
    }
}
