#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeKit
import Testing
import TestSupport

/// Card catch-up (`importOnConnect`): shots taken while the camera was away are imported
/// when it is back, once, across reconnections and restarts.
@Suite("card catch-up: shots taken while the cable was out (real libgphoto2, line by line)", .timeLimit(.minutes(3)))
struct CardCatchUpTests {
    /// The stored photos' names.
    func stored(_ folder: TemporaryDirectory) -> [String] { folder.names("out").filter { $0.hasSuffix(".jpg") }.sorted() }

    @Test("the cable pulled while the camera takes 5 shots with its button, then plugged in: the 5 are imported once; after a restart, and with every shot kept on the card, none again")
    func unpluggedShots() async throws {
        let camera = try await FakeCamera()
        let folder = TemporaryDirectory("catch-up")
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out"), backend: "  keepOnCamera: true"), in: folder)
        let environment = ["HOME": camera.home.path]
        var session = try RunningProcess(["run", "--config", config], in: folder.path, environment: environment)
        #expect(await shoot(session, "enter", answers: 1).last == "enteredPhotoMode", "\(session.stderrSoFar)")
        #expect(await shoot(session, answers: 2).last?.hasPrefix("photoSuccess") == true)

        camera.toggleCable()
        await session.waitForOutput("camera connection lost")
        for press in 1...5 {
            camera.pressButton()
            await camera.waitForLog("button pressed") { count("button pressed", in: $0) >= press }
        }
        camera.toggleCable()
        await session.waitForOutput("5 imported") { count("imported from the card", in: $0) >= 5 }
        #expect(await eventually { self.stored(folder).count == 6 }, "\(stored(folder))")
        #expect(session.stderrSoFar.contains("5 file(s) on the card were never delivered (taken while the camera was away): importing them"))
        // Back in business: the next shot is the seventh photo.
        #expect(await shoot(session, answers: 3).last?.hasPrefix("photoSuccess") == true, "\(session.stderrSoFar.suffix(1500))")
        session.send("exit\n")
        session.closeInput()
        #expect(await session.wait(timeout: .seconds(30)).status == 0)
        #expect(stored(folder).count == 7 && count("imported from the card", in: session.stderrSoFar) == 5)

        // A restart: the 7 still on the card were all delivered; nothing comes twice.
        session = try RunningProcess(["run", "--config", config, "--verbose"], in: folder.path, environment: environment)
        #expect(await shoot(session, "enter", answers: 1).last == "enteredPhotoMode")
        #expect(await shoot(session, answers: 2).last?.hasPrefix("photoSuccess") == true)
        session.send("exit\n")
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(30))
        #expect(outcome.status == 0 && !outcome.stderr.contains("imported from the card"), "\(outcome.stderr.suffix(1500))")
        let onCard = try await camera.filesOnCard()
        #expect(stored(folder).count == 8 && onCard.count == 8, "\(onCard)")
    }

    @Test("a camera met for the first time: with importOnConnect new its card's shots stay there, with all they are imported, with none nothing is looked at")
    func firstMeeting() async throws {
        for (mode, imported) in [("new", 0), ("all", 2), ("none", 0)] {
            let camera = try await FakeCamera()
            for press in 1...2 {  // one at a time: two signals sent at once arrive as one
                camera.pressButton()
                await camera.waitForLog("button pressed") { count("button pressed", in: $0) >= press }
            }
            let folder = TemporaryDirectory("catch-up-\(mode)")
            let config = try writeConfig(tetherConfig(camera, output: folder.file("out"), backend: "  importOnConnect: \(mode)"), in: folder)
            let session = try RunningProcess(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
            #expect(await shoot(session, "enter", answers: 1).last == "enteredPhotoMode")
            if mode == "new" { await session.waitForOutput("2 file(s) already on the card when shutterpipe first met this camera stay there") }
            if mode == "all" { await session.waitForOutput("2 imported") { count("imported from the card", in: $0) >= 2 } }
            // A shot after the catch-up is in: it comes after the imports.
            #expect(await shoot(session, answers: 2).last?.hasPrefix("photoSuccess") == true)
            session.send("exit\n")
            session.closeInput()
            let outcome = await session.wait(timeout: .seconds(30))
            #expect(outcome.status == 0)
            #expect(stored(folder).count == imported + 1 && count("imported from the card", in: outcome.stderr) == imported, "\(mode): \(stored(folder))")
        }
    }
}
