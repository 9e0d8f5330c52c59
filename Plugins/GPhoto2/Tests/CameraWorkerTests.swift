#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeKit
import Testing
import TestSupport

/// The workers of a running session (its children running shutterpipe-camera-worker).
func workerPIDs(of session: RunningProcess) async throws -> [pid_t] {
    let listing = try await runProgram(["pgrep", "-P", String(session.pid), "-f", "shutterpipe-camera-worker"]).text
    return listing.split(separator: "\n").compactMap { pid_t($0) }
}

/// Sends one line and waits for the answer that makes `count` answers, as a photographer
/// pressing the remote after seeing the last result.
func shoot(_ session: RunningProcess, _ line: String = "capture", answers count: Int) async -> [String] {
    session.send(line + "\n")
    _ = await eventually(timeout: .seconds(40)) { answerLines(session).count >= count }
    return answerLines(session)
}

func answerLines(_ session: RunningProcess) -> [String] {
    session.stdoutSoFar.split(separator: "\n").map(String.init).filter { $0.hasPrefix("photo") || $0.hasPrefix("entered") || $0.hasPrefix("exited") }
}

@Suite("camera workers: crashes, hangs, reconnects, RAW+JPEG (real libgphoto2, line by line)", .timeLimit(.minutes(3)))
struct CameraWorkerTests {
    @Test("a worker killed with SIGSEGV mid-capture, and one stopped with SIGSTOP: one shot fails each, the session reads on, the next shot works")
    func workerFaults() async throws {
        let folder = TemporaryDirectory("worker-faults")
        // The camera holds each capture at a gate: the worker is killed (or stopped) while
        // its shot is surely in flight, however slow the machine.
        let gate = try FileGate(in: folder)
        let camera = try await FakeCamera(["--gate", gate.path])
        // A stopped worker is found out at captureTimeout; generous, so that a shot on a
        // loaded machine (a new worker opening the camera first) is never taken for one.
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out")).replacingOccurrences(of: "captureTimeout: 30s", with: "captureTimeout: 20s"),
                                     in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        try gate.release(2)
        #expect(await shoot(session, answers: 1).last?.hasPrefix("photoSuccess") == true, "\(session.stderrSoFar)")
        #expect(await shoot(session, answers: 2).last?.hasPrefix("photoSuccess") == true)

        // SIGSEGV while the camera exposes: that shot answers what happened.
        let first = try #require(try await workerPIDs(of: session).first)
        session.send("capture\n")
        await camera.waitForLog("capture 3 waits at the gate")
        kill(first, SIGSEGV)
        _ = await eventually { answerLines(session).count >= 3 }
        let crashed = answerLines(session).dropFirst(2).first ?? "no answer"
        #expect(crashed.hasPrefix("photoFailed cameraFailure: the camera worker for 'camera' crashed with SIGSEGV; restarted"), "\(crashed)")
        // The crashed shot's exposure: the camera still announces it, before the next shot
        // is asked for (else its events would come during that shot, like a bracket's).
        try gate.release()
        await camera.waitForLog("capture 3 announced")
        try gate.release()
        #expect(await shoot(session, answers: 4).last?.hasPrefix("photoSuccess") == true, "\(answerLines(session))\n\(session.stderrSoFar.suffix(3000))")
        let second = try #require(try await workerPIDs(of: session).first)
        #expect(second != first)

        // SIGSTOP: the worker hangs; at the deadline it is killed and replaced.
        session.send("capture\n")
        await camera.waitForLog("capture 5 waits at the gate")
        kill(second, SIGSTOP)
        _ = await eventually(timeout: .seconds(90)) { answerLines(session).count >= 5 }
        #expect(answerLines(session).dropFirst(4).first?.hasPrefix("photoFailed timeout") == true, "\(answerLines(session))")
        try gate.release()
        await camera.waitForLog("capture 5 announced")
        try gate.release(2)
        #expect(await shoot(session, answers: 6).last?.hasPrefix("photoSuccess") == true, "\(session.stderrSoFar.suffix(3000))")
        #expect(await shoot(session, answers: 7).last?.hasPrefix("photoSuccess") == true)
        let third = try #require(try await workerPIDs(of: session).first)
        #expect(third != second)

        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(60))
        #expect(outcome.status == 4)  // some events failed, by design: exit 4
        let answers = outcome.lines.filter { $0.hasPrefix("photo") }
        #expect(answers.count == 7 && answers.filter { $0.hasPrefix("photoFailed") }.count == 2, "\(answers)")
        #expect(outcome.stderr.contains("did not answer in time; killed and restarted"), "\(outcome.stderr.suffix(2000))")
        // Five answered shots. The two failed shots' exposures: the camera announces each
        // when the gate lets it go, before the next shot; a worker that hears of one stores
        // it as a shot from the camera (each extra file is one it logged), or it stays on
        // the card. None is lost, none rides in another shot's answer.
        let stored = folder.names("out").filter { $0.hasSuffix(".jpg") }.count
        let cameraShots = outcome.stderr.components(separatedBy: "camera shot #").count - 1
        let onCard = try await camera.filesOnCard().count
        #expect(stored == 5 + cameraShots && stored + onCard >= 7, "\(stored) files, \(cameraShots) camera shots, \(onCard) on the card\n\(outcome.stderr.suffix(2000))")
    }

    @Test("a PTP/IP camera dropped and reconnected while stdin is fed line by line: the session reads every line (libgphoto2's close(0) stays in the worker)")
    func reconnectLineByLine() async throws {
        let folder = TemporaryDirectory("worker-close0")
        let camera = try await FakeCamera(["--drop-after", "2"])
        let session = try await RunningProcess.start(["run", "--config", try writeConfig(tetherConfig(camera, output: folder.file("out")), in: folder)],
                                         in: folder.path, environment: ["HOME": camera.home.path])
        var answers: [String] = []
        for count in 1...8 {
            answers = await shoot(session, answers: count)
            #expect(answers.count == count, "line \(count) got no answer: \(answers)\n\(session.stderrSoFar.suffix(2000))")
            #expect(session.isRunning, "the session ended by itself after line \(count)")
            if !session.isRunning { break }
        }
        #expect(answers.prefix(2).allSatisfy { $0.hasPrefix("photoSuccess") }, "\(answers)")
        #expect(answers.contains { $0.hasPrefix("photoFailed cameraFailure") }, "the dropped connection fails its shot: \(answers)")
        #expect(answers.last?.hasPrefix("photoSuccess") == true, "and the camera is back: \(answers)")
        #expect(!answers.contains { $0.hasPrefix("exited") }, "nobody sent exit: \(answers)")
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(30))
        #expect(outcome.status == 4)  // some events failed, by design: exit 4
        #expect(outcome.lines.last?.hasPrefix("exitedOrUnableToEnter") == true)  // the end of input, only now
    }

    @Test("RAW+JPEG: 10 shots across two photo-mode sessions store 10 RAW and 10 JPEG files, and leave the card empty")
    func rawPlusJPEGEveryShot() async throws {
        let folder = TemporaryDirectory("worker-raw")
        let camera = try await FakeCamera(["--raw-plus-jpeg"])
        let session = try await RunningProcess.start(["run", "--config", try writeConfig(tetherConfig(camera, output: folder.file("out")), in: folder)],
                                         in: folder.path, environment: ["HOME": camera.home.path])
        var count = 0
        for _ in 1...2 {
            for _ in 1...5 {
                count += 1
                let answer = await shoot(session, answers: count).last ?? ""
                #expect(answer.hasPrefix("photoSuccess") && answer.contains(".cr2") && answer.contains(".jpg"), "shot \(count): \(answer)")
            }
            count += 1
            #expect(await shoot(session, "exit", answers: count).last == "exitedOrUnableToEnter")
        }
        session.closeInput()
        #expect(await session.wait(timeout: .seconds(30)).status == 0)
        let names = folder.names("out")
        #expect(names.filter { $0.hasSuffix(".cr2") }.count == 10 && names.filter { $0.hasSuffix(".jpg") }.count == 10, "\(names)")
        #expect(try await camera.filesOnCard().isEmpty)
    }

    @Test("a transfer cut short is downloaded again; cut short twice, the shot answers photoFailed with both sizes and stays on the card")
    func shortTransfers() async throws {
        let folder = TemporaryDirectory("worker-short")
        // The first download is cut short: shot 1 is saved by its second try.
        var camera = try await FakeCamera(["--short-transfers", "1"])
        var session = try await RunningProcess.start(["run", "--config", try writeConfig(tetherConfig(camera, output: folder.file("out")), in: folder)],
                                         in: folder.path, environment: ["HOME": camera.home.path])
        for count in 1...3 {
            let answer = await shoot(session, answers: count).last ?? ""
            #expect(answer.hasPrefix("photoSuccess"), "shot \(count): \(answer)")
        }
        session.closeInput()
        var outcome = await session.wait(timeout: .seconds(30))
        #expect(outcome.status == 0)
        #expect(outcome.stderr.contains("downloading it again"))
        for name in folder.names("out") where name.hasSuffix(".jpg") {
            let data = try Data(contentsOf: URL(fileURLWithPath: folder.file("out/\(name)")))
            #expect(data.suffix(2) == Data([0xFF, 0xD9]), "\(name) was stored cut short (\(data.count) bytes)")
        }
        #expect(try await camera.filesOnCard().isEmpty)

        // Both tries of the first shot cut short: it fails, naming the sizes, and stays on the card.
        await camera.stop()
        camera = try await FakeCamera(["--short-transfers", "2"], port: camera.port, home: camera.home)
        let second = TemporaryDirectory("worker-short-twice")
        session = try await RunningProcess.start(["run", "--config", try writeConfig(tetherConfig(camera, output: second.file("out")), in: second)],
                                     in: second.path, environment: ["HOME": camera.home.path])
        let answer = await shoot(session, answers: 1).last ?? ""
        #expect(answer.hasPrefix("photoFailed cameraFailure"), "\(answer)")
        #expect(answer.contains("bytes of the") && answer.contains("the shot stays on the card"), "\(answer)")
        session.closeInput()
        outcome = await session.wait(timeout: .seconds(30))
        #expect(second.names("out").filter { $0.hasSuffix(".jpg") }.isEmpty)
        #expect(try await camera.filesOnCard().count == 1, "the shot that could not be downloaded whole must stay on the card")
    }

    @Test("libgphoto2's own messages reach the session's log, naming the camera, only with libgphoto2Log: true (they cost every download a hexdump)")
    func libraryLogOnRequest() async throws {
        for forwarded in [true, false] {
            let folder = TemporaryDirectory("worker-library-log")
            let camera = try await FakeCamera(["--store-full-after", "1"])
            let config = try writeConfig(tetherConfig(camera, output: folder.file("out"), backend: "  libgphoto2Log: \(forwarded)"), in: folder)
            let session = try await RunningProcess.start(["run", "--config", config, "--verbose", "--log-format", "json"],
                                             in: folder.path, environment: ["HOME": camera.home.path])
            #expect(await shoot(session, answers: 1).last?.hasPrefix("photoSuccess") == true)
            #expect(await shoot(session, answers: 2).last?.hasPrefix("photoFailed storageUnavailable") == true, "\(answerLines(session))")
            session.closeInput()
            let outcome = await session.wait(timeout: .seconds(30))
            let records = outcome.stderr.split(separator: "\n").filter { $0.contains("\"message\":\"libgphoto2 ") }
            if forwarded {
                #expect(records.contains { $0.contains("Store Full") && $0.contains("\"camera\":\"camera\"") && $0.contains("\"level\":\"debug\"") },
                        "\(outcome.stderr.suffix(3000))")
            } else {
                #expect(records.isEmpty, "\(records)")
            }
        }
    }

    @Test("a camera worker that cannot be found fails enter and capture with where it was looked for and how to fix it; the session reads on")
    func workerMissing() async throws {
        let folder = TemporaryDirectory("worker-missing")
        let camera = try await FakeCamera()
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out")), in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path,
                                         environment: ["HOME": camera.home.path, "SHUTTERPIPE_CAMERA_WORKER": folder.file("no-such-worker")])
        let entered = await shoot(session, "enter", answers: 1).last ?? ""
        #expect(entered.hasPrefix("exitedOrUnableToEnter cameraFailure: SHUTTERPIPE_CAMERA_WORKER is '\(folder.file("no-such-worker"))', which is not an executable file"),
                "\(entered)")
        #expect(entered.contains("unset it to use the one next to shutterpipe"), "\(entered)")
        #expect(await shoot(session, answers: 2).last?.hasPrefix("photoFailed cameraFailure: SHUTTERPIPE_CAMERA_WORKER") == true)
        session.closeInput()
        #expect(await session.wait(timeout: .seconds(30)).status == 4)  // some events failed, by design: exit 4
    }
}
