import Foundation
import ShutterPipeFixtures
import TestSupport
import Testing

/// Cameras that do what real bodies do and the standard allows: slow to open, several
/// exposures per capture, names used again, events twice or for nothing. Real libgphoto2
/// against the virtual camera, stdin fed line by line.
@Suite("odd cameras (real libgphoto2, line by line)", .timeLimit(.minutes(3)))
struct CameraOdditiesTests {
    @Test("an open slower than enterTimeout: that enter fails with timeout, the next one waits for the same open, and the shot works")
    func slowOpen() async throws {
        let folder = TemporaryDirectory("slow-open")
        let camera = try await FakeCamera(["--open-delay", "3s"])
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out")).replacingOccurrences(of: "enterTimeout: 30s", with: "enterTimeout: 2s"),
                                     in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        let first = await shoot(session, "enter", answers: 1)
        #expect(first.last?.hasPrefix("exitedOrUnableToEnter timeout") == true, "\(first) \(session.stderrSoFar)")
        // Every enter until one succeeds (a loaded machine may need more than one): each
        // waits for the one open under way. A minute decides, not a count of tries.
        var answers = first
        let started = ContinuousClock.now
        while answers.last?.hasPrefix("enteredPhotoMode") != true && ContinuousClock.now - started < .seconds(60) {
            answers = await shoot(session, "enter", answers: answers.count + 1)
        }
        #expect(answers.last?.hasPrefix("enteredPhotoMode") == true, "\(answers) \(session.stderrSoFar)")
        #expect(await shoot(session, answers: answers.count + 1).last?.hasPrefix("photoSuccess") == true, "\(session.stderrSoFar)")
        session.send("exit\n")
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(30))
        #expect(outcome.status == 4, "\(outcome.stderr)")  // some events failed, by design: exit 4
        // The camera was opened once: no enter abandoned an open and started another.
        #expect(camera.logText.components(separatedBy: "opening a session slowly").count - 1 == 1, "\(camera.logText)")
    }

    /// The paths an answer line names.
    static func paths(_ answer: String) -> [String] {
        answer.split(separator: " ").map(String.init).filter { $0.hasPrefix("/") }
    }

    /// The photos stored in `folder`/out.
    static func photos(_ folder: TemporaryDirectory) -> [String] {
        folder.names("out").filter { $0.hasSuffix(".jpg") }
    }

    /// The shot number the virtual camera wrote into a stored JPEG's comment.
    static func shotNumber(in path: String) -> Int? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let text = String(decoding: data.prefix(4096), as: UTF8.self)
        guard let range = text.range(of: "shutterpipe-fakecam shot ") else { return nil }
        return Int(text[range.upperBound...].prefix { $0.isNumber })
    }

    @Test("bracketing: every exposure a capture makes is downloaded and stored, shot after shot, and the card is left empty")
    func severalObjectsPerCapture() async throws {
        let folder = TemporaryDirectory("bracketing")
        let camera = try await FakeCamera(["--objects-per-capture", "3"])
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out")), in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        for shot in 1...4 {
            let answer = await shoot(session, answers: shot).last ?? ""
            #expect(answer.hasPrefix("photoSuccess") && Self.paths(answer).count == 3, "shot \(shot): \(answer) \(session.stderrSoFar.suffix(2000))")
            // The three exposures of this capture, in order.
            #expect(Self.paths(answer).compactMap(Self.shotNumber) == [3 * shot - 2, 3 * shot - 1, 3 * shot], "shot \(shot): \(answer)")
        }
        session.closeInput()
        #expect(await session.wait(timeout: .seconds(30)).status == 0)
        #expect(Self.photos(folder).count == 12)
        #expect(try await camera.filesOnCard().isEmpty)
    }

    @Test("every ObjectAdded twice: each shot, triggered or from the button, is stored once")
    func duplicateEvents() async throws {
        let folder = TemporaryDirectory("duplicate-events")
        let camera = try await FakeCamera(["--duplicate-events"])
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out")), in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        for shot in 1...3 {
            let answer = await shoot(session, answers: shot).last ?? ""
            #expect(answer.hasPrefix("photoSuccess") && Self.paths(answer).count == 1, "shot \(shot): \(answer) \(session.stderrSoFar.suffix(2000))")
        }
        camera.pressButton()
        #expect(await eventually { Self.photos(folder).count >= 4 })
        let answer = await shoot(session, answers: 4).last ?? ""
        #expect(answer.hasPrefix("photoSuccess") && Self.paths(answer).count == 1, "\(answer)")
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(30))
        #expect(outcome.stderr.components(separatedBy: "shot taken on the camera:").count - 1 == 1, "\(outcome.stderr)")
        // Four triggered shots and one button shot, each once: shots 1 to 5.
        let stored = Self.photos(folder).compactMap { Self.shotNumber(in: folder.file("out/\($0)")) }.sorted()
        #expect(stored == [1, 2, 3, 4, 5], "\(Self.photos(folder))")
        #expect(try await camera.filesOnCard().isEmpty)
    }

    @Test("events for objects that do not exist, and unknown events: each costs only itself, with a log line; every real shot is stored")
    func bogusEvents() async throws {
        let folder = TemporaryDirectory("bogus-events")
        let camera = try await FakeCamera(["--bogus-events"])
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out")), in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        for shot in 1...3 {
            let answer = await shoot(session, answers: shot).last ?? ""
            #expect(answer.hasPrefix("photoSuccess") && Self.paths(answer).count == 1, "shot \(shot): \(answer) \(session.stderrSoFar.suffix(2000))")
        }
        camera.pressButton()
        #expect(await eventually { Self.photos(folder).count >= 4 }, "\(session.stderrSoFar.suffix(2000))")
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(30))
        #expect(outcome.status == 0)
        // One bogus ObjectAdded before each of the four real ones.
        #expect(outcome.stderr.components(separatedBy: "a camera event could not be handled, skipped").count - 1 >= 4, "\(outcome.stderr)")
        #expect(Self.photos(folder).compactMap { Self.shotNumber(in: folder.file("out/\($0)")) }.sorted() == [1, 2, 3, 4])
        #expect(try await camera.filesOnCard().isEmpty)
    }

    @Test("a camera that names every exposure capt0000.jpg and makes them all one size, in a burst: each answer carries its own exposure or is refused, none is lost unseen")
    func reusedNamesOneSize() async throws {
        // Twelve JPEGs of exactly one size, each saying which exposure it is: shot within a
        // second, two of them can have the same name, size and time, which is how a camera
        // that re-announces an earlier file looks too. Under load (once in a dozen full
        // runs, in the 30-shot burst below) the new one was taken for the earlier one
        // announced again and ignored while the earlier one's delete was still to come:
        // its shot failed, and the next shot of the name fetched it, the wrong exposure.
        // This burst has every exposure alike in size, so any such mix-up shows.
        let folder = TemporaryDirectory("reused-one-size")
        let card = folder.file("card")
        try FileManager.default.createDirectory(atPath: card, withIntermediateDirectories: true)
        let exposures = try await offThePool { (1...12).map { SyntheticJPEG.make(width: 64, height: 48, shot: $0, comment: "exposure \($0) of 12") } }
        let size = (exposures.map(\.count).max() ?? 0) + 16
        for (index, jpeg) in exposures.enumerated() {
            let padding = size - jpeg.count - 4  // a COM segment after SOI: marker, length, filler
            var padded = Data(jpeg.prefix(2)) + Data([0xFF, 0xFE, UInt8((padding + 2) >> 8), UInt8((padding + 2) & 0xFF)]) + Data(repeating: 0x20, count: padding)
            padded += jpeg.dropFirst(2)
            try padded.writeTestFile("\(card)/IMG_\(String(format: "%04d", index + 1)).JPG")
        }
        let camera = try await FakeCamera(["--reuse-names", "--images", card])
        // A hook that takes a moment: the next capture runs while a shot is still being
        // stored, before that shot's delete was asked for, as a loaded machine has it.
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out"),
                                                  sink: "  - {type: command, command: [/bin/sleep, \"0.3\"], actions: [download]}"), in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        session.send(String(repeating: "capture\n", count: 12))
        #expect(await eventually { answerLines(session).count >= 12 }, "\(answerLines(session)) \(session.stderrSoFar.suffix(2000))")
        let answers = answerLines(session)
        for (index, answer) in answers.enumerated() {
            if answer.hasPrefix("photoSuccess") {
                let stored = Self.paths(answer).compactMap { FileManager.default.contents(atPath: $0) }.map { String(decoding: $0, as: UTF8.self) }
                #expect(stored.count == 1 && stored[0].contains("exposure \(index + 1) of 12"), "answer \(index + 1) carries another exposure: \(answer)")
            } else {
                #expect(answer.contains("named a new exposure 'capt0000.jpg'"), "answer \(index + 1): \(answer)\n\(session.stderrSoFar.suffix(2000))")
            }
        }
        session.closeInput()
        _ = await session.wait(timeout: .seconds(60))
    }

    @Test("a camera that names every exposure capt0000.jpg: never the earlier exposure in an answer, never the newer one deleted unstored")
    func reusedNames() async throws {
        // Deleting stored shots: the earlier file is gone before the next exposure is
        // fetched, so every answer carries its own exposure.
        let folder = TemporaryDirectory("reused-names")
        let camera = try await FakeCamera(["--reuse-names", "--width", "160", "--height", "120"])
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out")), in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        // Twenty: libgphoto2 kept serving the name's earlier listing and bytes from its
        // cache, which at full counts showed from shot 16 on.
        for shot in 1...20 {
            let answer = await shoot(session, answers: shot).last ?? ""
            #expect(answer.hasPrefix("photoSuccess") && Self.paths(answer).compactMap(Self.shotNumber) == [shot], "shot \(shot): \(answer) \(session.stderrSoFar.suffix(2000))")
        }
        session.closeInput()
        #expect(await session.wait(timeout: .seconds(30)).status == 0)
        #expect(try await camera.filesOnCard().isEmpty)

        // A burst: a capture may run before the last shot's delete (then that delete is run
        // first), or before it was even asked for (then the shot is refused, and kept).
        // Never a wrong exposure, never one lost or stored twice.
        let burst = TemporaryDirectory("reused-names-burst")
        let bursting = try await FakeCamera(["--reuse-names", "--width", "160", "--height", "120"])
        let burstConfig = try writeConfig(tetherConfig(bursting, output: burst.file("out")), in: burst)
        let third = try await RunningProcess.start(["run", "--config", burstConfig], in: burst.path, environment: ["HOME": bursting.home.path])
        third.send(String(repeating: "capture\n", count: 30))
        _ = await eventually(timeout: .seconds(60)) { answerLines(third).count >= 30 }
        let answers = answerLines(third)
        #expect(answers.count == 30, "\(answers)")
        for (index, answer) in answers.enumerated() {
            if answer.hasPrefix("photoSuccess") {
                #expect(Self.paths(answer).compactMap(Self.shotNumber) == [index + 1], "answer \(index + 1): \(answer)")
            } else {
                #expect(answer.contains("named a new exposure 'capt0000.jpg'"), "answer \(index + 1): \(answer) \(third.stderrSoFar.suffix(2000))")
            }
        }
        third.closeInput()
        _ = await third.wait(timeout: .seconds(30))
        let storedShots = Self.photos(burst).compactMap { Self.shotNumber(in: burst.file("out/\($0)")) }
        #expect(Set(storedShots).count == storedShots.count && storedShots.count == answers.filter { $0.hasPrefix("photoSuccess") }.count)

        // Keeping shots on the card: the second exposure's name is held by the first, so it
        // is refused, with the fix, and both stay on the card.
        let kept = TemporaryDirectory("reused-names-kept")
        let keeping = try await FakeCamera(["--reuse-names"])
        let keepConfig = try writeConfig(tetherConfig(keeping, output: kept.file("out"), backend: "  keepOnCamera: true"), in: kept)
        let second = try await RunningProcess.start(["run", "--config", keepConfig], in: kept.path, environment: ["HOME": keeping.home.path])
        let first = await shoot(second, answers: 1).last ?? ""
        #expect(first.hasPrefix("photoSuccess") && Self.paths(first).compactMap(Self.shotNumber) == [1], "\(first)")
        let refused = await shoot(second, answers: 2).last ?? ""
        #expect(refused.hasPrefix("photoFailed cameraFailure") && refused.contains("named a new exposure 'capt0000.jpg'"), "\(refused)")
        second.closeInput()
        let outcome = await second.wait(timeout: .seconds(30))
        #expect(outcome.stderr.contains("set the camera's file numbering to continuous"), "\(outcome.stderr)")
        #expect(Self.photos(kept).count == 1)
    }
}

