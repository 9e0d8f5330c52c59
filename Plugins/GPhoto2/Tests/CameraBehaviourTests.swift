#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeKit
import Testing
import TestSupport


/// Cameras as they really behave: action settings, a card that fills during a capture, no
/// live view, settings asked for while the camera is away. Each behaviour of the virtual
/// camera is first checked with the gphoto2 CLI, so that it is libgphoto2's reading of it
/// that shutterpipe is tested against.
@Suite("cameras as they behave: actions, a card that fills, reconnection (real libgphoto2, line by line)", .timeLimit(.minutes(3)))
struct CameraBehaviourTests {
    @Test("an action (opcode, a clock) is sent once and never again; a value is applied again on the next enter as it was asked; camera settings marks actions")
    func actionsAreSentOnce() async throws {
        let camera = try await FakeCamera()
        // libgphoto2's own reading: opcode takes a vendor operation and reads back its placeholder.
        let cli = try await camera.gphoto2(["--set-config", "opcode=0x9998,0x0,0x1"])
        #expect(cli.status == 0, "\(cli.text)\n\(cli.errors)")
        #expect(try await camera.gphoto2(["--get-config", "opcode"]).text.contains("Current: 0x1001,0xparam1,0xparam2"))
        #expect(await camera.waitForLog("vendor operation 0x9998"))

        let folder = TemporaryDirectory("actions")
        let out = folder.file("out")
        let config = try writeConfig(tetherConfig(camera, output: out, backend: "  settings: {iso: 200}"), in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        #expect(await shoot(session, "enter", answers: 1).last == "enteredPhotoMode", "\(session.stderrSoFar)")
        for (line, answer) in [("set opcode=0x9999,0x0,0x1f4", "settingsApplied opcode=0x9999,0x0,0x1f4"), ("set datetime=now", "settingsApplied datetime=now"),
                               ("set shutterspeed=1/250", "settingsApplied shutterspeed=0.0040s")] {
            session.send(line + "\n")
            await session.waitForOutput(answer, on: .stdout)
        }
        #expect(await shoot(session, "exit", answers: 2).last == "exitedOrUnableToEnter")
        #expect(await shoot(session, "enter", answers: 3).last == "enteredPhotoMode", "the action broke the next enter: \(session.stderrSoFar.suffix(2000))")
        #expect(await shoot(session, answers: 4).last?.hasPrefix("photoSuccess") == true, "\(session.stderrSoFar.suffix(2000))")
        session.send("exit\n")
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(30))
        #expect(outcome.status == 0, "\(outcome.stderr.suffix(2000))")

        #expect(count("vendor operation 0x9999", in: camera.logText) == 1, "opcode replayed: \(camera.logText)")
        #expect(count("property 0x5011 set", in: camera.logText) == 1, "the clock set again with a stale time: \(camera.logText)")
        #expect(outcome.stderr.contains("opcode sent: 0x9999,0x0,0x1f4 (an action: done once, not kept)"), "\(outcome.stderr)")
        // The value as asked for, and as the camera words it, on the change and on the reopen.
        #expect(count("shutterspeed set to 0.0040s (asked: 1/250)", in: outcome.stderr) == 2, "\(outcome.stderr)")
        #expect(try await CameraSettingsTests.exposures(out).values.first == "iso 200 f/5.6 1/250 s")
    }

    @Test("a session value the camera no longer takes after a reconnection is dropped with the camera's reason; the camera opens with the config's, and so does the next enter")
    func refusedOnReopen() async throws {
        let home = TemporaryDirectory("reopen-home")
        let first = try await FakeCamera(home: home)
        let folder = TemporaryDirectory("reopen")
        let out = folder.file("out")
        let config = try writeConfig(tetherConfig(first, output: out, backend: "  settings: {iso: 200}"), in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": home.path])
        #expect(await shoot(session, "enter", answers: 1).last == "enteredPhotoMode", "\(session.stderrSoFar)")
        session.send("set iso=3200\n")
        await session.waitForOutput("settingsApplied iso=3200", on: .stdout)
        #expect(await shoot(session, answers: 2).last?.hasPrefix("photoSuccess") == true)

        // Unplugged, and back with a firmware that offers less.
        await first.stop()
        await session.waitForOutput("camera connection lost")
        let second = try await FakeCamera(["--iso-choices", "100,200,400"], port: first.port, home: home)
        await session.waitForOutput("back at \(second.portSpec)")
        let log = session.stderrSoFar
        #expect(log.contains("iso=3200 could not be applied again on reopening the camera: iso '3200' is not offered by PTP/IP Camera; choices: 100, 200, 400"), "\(log.suffix(3000))")
        #expect(log.contains("left out from now on (set it again once the camera takes it)"))
        #expect(await shoot(session, answers: 3).last?.hasPrefix("photoSuccess") == true, "\(session.stderrSoFar.suffix(2000))")
        #expect(await shoot(session, "exit", answers: 4).last == "exitedOrUnableToEnter")
        #expect(await shoot(session, "enter", answers: 5).last == "enteredPhotoMode", "\(session.stderrSoFar.suffix(2000))")
        #expect(await shoot(session, answers: 6).last?.hasPrefix("photoSuccess") == true, "\(answerLines(session))\n\(session.stderrSoFar.suffix(4000))")
        session.send("exit\n")
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(30))
        #expect(count("could not be applied again", in: outcome.stderr) == 1, "dropped, not tried again: \(outcome.stderr.suffix(3000))")
        let isos = try await CameraSettingsTests.exposures(out).sorted { $0.key < $1.key }.map { $0.value.split(separator: " ").prefix(2).joined(separator: " ") }
        #expect(isos == ["iso 3200", "iso 200", "iso 200"], "\(isos)")
    }

    @Test("a card that fills during a capture: photoFailed storageUnavailable at once (StoreFull), as the gphoto2 CLI says; no worker restart, and the earlier shot's delete still runs")
    func cardFillsDuringCapture() async throws {
        // libgphoto2's own reading of the camera's StoreFull event.
        let full = try await FakeCamera(["--card-fills-after", "0"])
        let cli = try await full.gphoto2(["--capture-image-and-download"])
        #expect(cli.status != 0 && (cli.text + cli.errors).contains("Camera memorycard ran full during capture"), "\(cli.text)\n\(cli.errors)")
        await full.stop()

        let camera = try await FakeCamera(["--card-fills-after", "1"])
        let folder = TemporaryDirectory("card-fills")
        // A capture waited out would be answered after 60 s, past shoot()'s 40 s.
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out")).replacingOccurrences(of: "captureTimeout: 30s", with: "captureTimeout: 60s"),
                                     in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        #expect(await shoot(session, answers: 1).last?.hasPrefix("photoSuccess") == true, "\(session.stderrSoFar)")
        let workers = try await workerPIDs(of: session)
        let answer = await shoot(session, answers: 2).last ?? ""
        #expect(answer.hasPrefix("photoFailed storageUnavailable: the camera's card is full: it said so during the capture (PTP StoreFull)"), "\(answer)")
        #expect(answer.contains("(free space or change the card)"))
        #expect(try await workerPIDs(of: session) == workers, "the worker was restarted")
        session.send("exit\n")
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(30))
        #expect(!outcome.stderr.contains("killed and restarted"), "\(outcome.stderr.suffix(2000))")
        #expect(try await camera.filesOnCard().isEmpty, "the first shot's delete did not run")
    }

    @Test("while the camera is away: a set is refused with cameraFailure 'reconnecting' (not notInPhotoMode), the reconnection's cause is logged once, and the camera comes back")
    func whileReconnecting() async throws {
        let home = TemporaryDirectory("away-home")
        let camera = try await FakeCamera(home: home)
        let folder = TemporaryDirectory("away")
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out")), in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": home.path])
        #expect(await shoot(session, answers: 1).last?.hasPrefix("photoSuccess") == true, "\(session.stderrSoFar)")
        await camera.stop()
        await session.waitForOutput("could not reopen the camera")
        session.send("set iso=400\n")
        await session.waitForOutput("settingsRefused", on: .stdout)
        let refusal = session.stdoutSoFar.split(separator: "\n").first { $0.hasPrefix("settingsRefused") } ?? ""
        #expect(refusal.hasPrefix("settingsRefused cameraFailure: the camera is reconnecting"), "\(refusal)")
        let whileAway = await shoot(session, answers: 2).last ?? ""
        #expect(whileAway.hasPrefix("photoFailed cameraFailure: the camera is not connected; shutterpipe keeps trying to reconnect"), "\(whileAway)")
        let back = try await FakeCamera(port: camera.port, home: home)
        await session.waitForOutput("back at \(back.portSpec)")
        let afterReturn = await shoot(session, answers: 3)
        #expect(afterReturn.last?.hasPrefix("photoSuccess") == true, "\(afterReturn) \(session.stderrSoFar.suffix(2000))")
        session.send("exit\n")
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(30))
        #expect(count("could not reopen the camera: ", in: outcome.stderr) == 1, "the same cause logged at every attempt: \(outcome.stderr.suffix(3000))")
        #expect(outcome.stderr.contains("cannot open PTP/IP Camera at \(camera.portSpec)"), "the cause is named")
    }

    @Test("a camera that captures into its memory (every exposure capt0000.jpg, in one object, announced at once): every shot stored, line by line and in a burst, each deleted before the next is fetched; the gphoto2 CLI the same")
    func inMemoryCapture() async throws {
        let reference = try await FakeCamera(["--ram-capture"])
        for shot in 1...3 {
            let run = try await reference.gphoto2(["--capture-image-and-download", "--filename", reference.home.file("cli-\(shot).jpg")])
            #expect(run.status == 0, "\(run.text)\n\(run.errors)")
        }
        #expect((1...3).compactMap { CameraOdditiesTests.shotNumber(in: reference.home.file("cli-\($0).jpg")) } == [1, 2, 3])

        let camera = try await FakeCamera(["--ram-capture"])
        let folder = TemporaryDirectory("in-memory")
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out")), in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        for shot in 1...4 {
            let answer = await shoot(session, answers: shot).last ?? ""
            #expect(answer.hasPrefix("photoSuccess") && CameraOdditiesTests.paths(answer).compactMap(CameraOdditiesTests.shotNumber) == [shot],
                    "shot \(shot): \(answer) \(session.stderrSoFar.suffix(2000))")
        }
        session.send(String(repeating: "capture\n", count: 4))
        #expect(await eventually { answerLines(session).count >= 8 }, "\(answerLines(session))")
        for (index, answer) in answerLines(session).enumerated() {
            #expect(answer.hasPrefix("photoSuccess") && CameraOdditiesTests.paths(answer).compactMap(CameraOdditiesTests.shotNumber) == [index + 1],
                    "answer \(index + 1): \(answer)")
        }
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(30))
        #expect(outcome.status == 0 && outcome.stderr.contains("(camera: capt0000.jpg)"), "the camera's name in the log: \(outcome.stderr.suffix(2000))")
        #expect(try await camera.filesOnCard().isEmpty)
    }

    @Test("keeping shots on a camera that captures into its memory: a button shot in the stored one's place is not dropped silently but refused with a warning and the fix; a triggered one answers photoFailed with it")
    func sameNameSizeAndTimeKept() async throws {
        let camera = try await FakeCamera(["--ram-capture"])
        let folder = TemporaryDirectory("in-memory-kept")
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out"), backend: "  keepOnCamera: true"), in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        #expect(await shoot(session, answers: 1).last?.hasPrefix("photoSuccess") == true, "\(session.stderrSoFar)")
        camera.pressButton()
        // Whether libgphoto2 still gives the stored one's size and time for the object or
        // the new one's, the shot is named, with the fix.
        await session.waitForOutput("a shot from the camera's button: the camera ")
        let warning = session.stderrSoFar.components(separatedBy: "\n").first { $0.contains("a shot from the camera's button") } ?? ""
        #expect(warning.contains("'capt0000.jpg'") && warning.contains("(fix: set the camera's file numbering to continuous"), "\(warning)")
        let refused = await shoot(session, answers: 2).last ?? ""
        #expect(refused.hasPrefix("photoFailed cameraFailure: the camera ") && refused.contains("'capt0000.jpg'") && refused.contains("on the card"), "\(refused)")
        session.closeInput()
        _ = await session.wait(timeout: .seconds(30))
        #expect(try await camera.filesOnCard() == ["capt0000.jpg"], "the newest exposure stays on the card")
    }

    @Test("keeping shots on a camera that reuses names: two button shots given the kept one's name are each said in a warning, and the next session, which cannot reach them (libgphoto2 lists one file of a name), says so once with the fix, never at debug level only")
    func hiddenByAKeptName() async throws {
        let camera = try await FakeCamera(["--reuse-names"])
        let folder = TemporaryDirectory("hidden-by-name")
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out"), backend: "  keepOnCamera: true"), in: folder)
        let first = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        #expect(await shoot(first, answers: 1).last?.hasPrefix("photoSuccess") == true, "\(first.stderrSoFar)")
        for press in 1...2 {
            camera.pressButton()
            await first.waitForOutput(on: .stderr, "warning \(press) of a button shot") {
                $0.components(separatedBy: "warning: a shot from the camera's button: ").count - 1 >= press
            }
        }
        first.closeInput()
        _ = await first.wait(timeout: .seconds(30))
        #expect(try await camera.filesOnCard() == ["capt0000.jpg"], "the gphoto2 CLI too lists one file of the name, of the three on the card")

        // The next session lists the card for shots taken while it was away.
        let second = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        #expect(await shoot(second, "enter", answers: 1).last == "enteredPhotoMode", "\(second.stderrSoFar)")
        await second.waitForOutput("more than one file named 'capt0000.jpg'")
        second.send("exit\n")
        second.closeInput()
        let outcome = await second.wait(timeout: .seconds(30))
        let warnings = outcome.stderr.components(separatedBy: "\n").filter { $0.contains("more than one file named 'capt0000.jpg'") }
        #expect(warnings.count == 1 && warnings[0].contains("warning:") && warnings[0].contains("stays on the card") && warnings[0].contains("(fix: set the camera's file numbering to continuous"),
                "\(outcome.stderr)")
        #expect(!outcome.stderr.contains("photoSuccess"), "nothing imported in the kept one's name: \(outcome.stderr)")
    }

    @Test("bracketing (three files a capture): every file of every capture is deleted by the end of the session, the last capture's too")
    func lastDeletesOfASession() async throws {
        let camera = try await FakeCamera(["--objects-per-capture", "3"])
        let folder = TemporaryDirectory("last-deletes")
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out")), in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        for shot in 1...3 { #expect(await shoot(session, answers: shot).last?.hasPrefix("photoSuccess") == true, "\(session.stderrSoFar.suffix(2000))") }
        session.send("exit\n")
        session.closeInput()
        #expect(await session.wait(timeout: .seconds(30)).status == 0)
        #expect(folder.names("out").filter { $0.hasSuffix(".jpg") }.count == 9)
        #expect(try await camera.filesOnCard().isEmpty)
    }

    @Test("a camera busy writing its last shot refuses a capture (DeviceBusy): photoFailed cameraFailure at once, saying so, and the next shot works")
    func busyCamera() async throws {
        // (The gphoto2 CLI waits on such a camera until it is killed: no reference here.)
        let camera = try await FakeCamera(["--busy-captures", "2"])
        let folder = TemporaryDirectory("busy")
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out")).replacingOccurrences(of: "captureTimeout: 30s", with: "captureTimeout: 60s"),
                                     in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        #expect(await shoot(session, answers: 1).last?.hasPrefix("photoSuccess") == true, "\(session.stderrSoFar)")
        let busy = await shoot(session, answers: 2).last ?? ""
        #expect(busy.hasPrefix("photoFailed cameraFailure: the camera is busy and refused capture") && busy.contains("then shoot again"), "\(busy)")
        #expect(await shoot(session, answers: 3).last?.hasPrefix("photoSuccess") == true, "\(session.stderrSoFar.suffix(2000))")
        session.closeInput()
        #expect(!(await session.wait(timeout: .seconds(30))).stderr.contains("killed and restarted"))
    }

    @Test("a camera that reuses one name: a shot from its button under the stored shot's name is stored once that one is deleted, and so is the next capture")
    func buttonShotUnderAReusedName() async throws {
        let camera = try await FakeCamera(["--reuse-names"])
        let folder = TemporaryDirectory("reused-button")
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out")), in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        #expect(await shoot(session, answers: 1).last?.hasPrefix("photoSuccess") == true, "\(session.stderrSoFar)")
        camera.pressButton()
        await session.waitForOutput("camera shot #2 → photoSuccess")
        let next = await shoot(session, answers: 2).last ?? ""
        #expect(next.hasPrefix("photoSuccess") && CameraOdditiesTests.paths(next).compactMap(CameraOdditiesTests.shotNumber) == [3], "\(next)")
        session.closeInput()
        _ = await session.wait(timeout: .seconds(30))
        let shots = CameraOdditiesTests.photos(folder).compactMap { CameraOdditiesTests.shotNumber(in: folder.file("out/\($0)")) }.sorted()
        #expect(shots == [1, 2, 3], "\(shots)")
        #expect(try await camera.filesOnCard().isEmpty)
    }

    @Test("a capture the camera ends without a file (CaptureComplete alone): photoFailed cameraFailure within a second, saying so, as the gphoto2 CLI fails; the next shot works")
    func captureWithoutAFile() async throws {
        let reference = try await FakeCamera(["--empty-captures", "1"])
        let cli = try await reference.gphoto2(["--capture-image-and-download", "--filename", reference.home.file("cli.jpg")])
        // (It says so, and exits 0 all the same.)
        #expect((cli.text + cli.errors).contains("Could not capture image"), "\(cli.text)\n\(cli.errors)")
        await reference.stop()

        let camera = try await FakeCamera(["--empty-captures", "2"])
        let folder = TemporaryDirectory("empty-capture")
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out")).replacingOccurrences(of: "captureTimeout: 30s", with: "captureTimeout: 60s"),
                                     in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        #expect(await shoot(session, answers: 1).last?.hasPrefix("photoSuccess") == true, "\(session.stderrSoFar)")
        let empty = await shoot(session, answers: 2).last ?? ""
        #expect(empty.hasPrefix("photoFailed cameraFailure: the camera finished the capture without a file") && empty.contains("then shoot again"), "\(empty)")
        #expect(await shoot(session, answers: 3).last?.hasPrefix("photoSuccess") == true, "\(session.stderrSoFar.suffix(2000))")
        session.closeInput()
        _ = await session.wait(timeout: .seconds(30))
    }
}
