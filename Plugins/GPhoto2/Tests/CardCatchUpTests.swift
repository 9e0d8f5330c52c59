#if canImport(Glibc)
import Glibc
#endif
import Foundation
import GPhoto2Backend
import ShutterPipeKit
import Synchronization
import Testing
import TestSupport

/// Card catch-up (`importOnConnect`): shots taken while the camera was away are imported
/// when it is back, once, across reconnections and restarts.
@Suite("card catch-up: shots taken while the cable was out (real libgphoto2, line by line)", .timeLimit(.minutes(3)))
struct CardCatchUpTests {
    /// The stored photos' names.
    func stored(_ folder: TemporaryDirectory) -> [String] { folder.names("out").filter { $0.hasSuffix(".jpg") }.sorted() }

    @Test("the cable pulled while the camera takes 5 shots with its button, then plugged in: the 5 are imported once; after a restart, and with every shot kept on the card, none again, though the camera's clock is not the computer's")
    func unpluggedShots() async throws {
        // Its clock 61 minutes and 7 seconds ahead, as a body's set by hand: libgphoto2 gives
        // a file a capture brought the computer's time, a later listing the camera's.
        let camera = try await FakeCamera(["--clock-offset", "3667"])
        let folder = TemporaryDirectory("catch-up")
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out"), backend: "  keepOnCamera: true"), in: folder)
        let environment = ["HOME": camera.home.path]
        var session = try await RunningProcess.start(["run", "--config", config, "--verbose"], in: folder.path, environment: environment)
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
        let firstLog = session.stderrSoFar
        // Marked in the catalogue as imported, not captured.
        let listed = try await shutterpipe(["shots", "--config", config, "--json"], in: folder.path, environment: environment)
        let triggers = (try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]] ?? []).compactMap { $0["trigger"] as? String }
        #expect(triggers.sorted() == ["card import", "card import", "card import", "card import", "card import", "stdin", "stdin"], "\(listed.stdout) \(listed.stderr)")

        // A restart: the 7 still on the card were all delivered; nothing comes twice.
        session = try await RunningProcess.start(["run", "--config", config, "--verbose"], in: folder.path, environment: environment)
        #expect(await shoot(session, "enter", answers: 1).last == "enteredPhotoMode")
        #expect(await shoot(session, answers: 2).last?.hasPrefix("photoSuccess") == true)
        // The catch-up has looked at the card (between requests) before the session ends.
        await session.waitForOutput("the catch-up's listing") { $0.contains("card catch-up:") || $0.contains("imported from the card") }
        session.send("exit\n")
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(30))
        // Wherever the worker keeps them (its settings folder below the session's HOME).
        let ledgers = (FileManager.default.enumerator(atPath: camera.home.path)?.allObjects as? [String] ?? [])
            .filter { ($0.split(separator: "/").last ?? "").hasPrefix("delivered-") }
            .map { "\($0): \((try? String(contentsOfFile: camera.home.file($0), encoding: .utf8)) ?? "unreadable")" }
        #expect(outcome.status == 0 && !outcome.stderr.contains("imported from the card"),
                "\(outcome.stderr.suffix(1500))\nledgers: \(ledgers)\nfirst session: \(firstLog.suffix(5000))")
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
            let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
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

    @Test("a camera met for the first time loses its cable right after a shot the session has not finished with: the button's shots taken while it was away come in, the shot itself does not")
    func lateOutcome() async throws {
        let camera = try await FakeCamera()
        let folder = TemporaryDirectory("catch-up-late")
        var options = GPhoto2Backend.Options()
        options.port = camera.portSpec
        options.keepOnCamera = true
        options.settingsFolder = folder.file("cameras")
        options.reconnectBackoffLimit = .milliseconds(500)
        let delivered = Mutex<[CapturedPhoto]>([])
        let lines = Mutex<[String]>([])
        let log = Logger(source: "backend") { record in lines.withLock { $0.append(record.message) } }
        let backend = GPhoto2Backend(options: options, log: log)
        try await backend.prepare(BackendContext(log: log, deliver: { photo in delivered.withLock { $0.append(photo) } }))
        let shot = try await backend.capture()
        #expect(shot.files.map(\.name) == ["IMG_0001.JPG"])

        // The sinks still have it (no finish yet) while the cable goes out and in.
        camera.toggleCable()
        #expect(await eventually { lines.withLock { $0.contains { $0.contains("camera connection lost") } } }, "\(lines.withLock { $0 })")
        for press in 1...2 {
            camera.pressButton()
            await camera.waitForLog("button pressed") { count("button pressed", in: $0) >= press }
        }
        camera.toggleCable()
        // The catch-up goes through the card in order: IMG_0001 would come first.
        #expect(await eventually { delivered.withLock { $0.count >= 2 } }, "\(lines.withLock { $0 })")
        #expect(delivered.withLock { $0.flatMap(\.files).map(\.name) } == ["IMG_0002.JPG", "IMG_0003.JPG"], "\(lines.withLock { $0 })")
        for photo in [shot] + delivered.withLock({ $0 }) { await backend.finish(photo, stored: true) }
        await backend.stop()
    }
}
