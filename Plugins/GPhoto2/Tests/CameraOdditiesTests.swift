import Foundation
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
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out")).replacingOccurrences(of: "enterTimeout: 10s", with: "enterTimeout: 2s"),
                                     in: folder)
        let session = try RunningProcess(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        let first = await shoot(session, "enter", answers: 1)
        #expect(first.last?.hasPrefix("exitedOrUnableToEnter timeout") == true, "\(first) \(session.stderrSoFar)")
        // Every enter until one succeeds (a loaded machine may need a third): each waits for
        // the one open under way.
        var answers = first
        for _ in 0..<3 where answers.last?.hasPrefix("enteredPhotoMode") != true {
            answers = await shoot(session, "enter", answers: answers.count + 1)
        }
        #expect(answers.last?.hasPrefix("enteredPhotoMode") == true, "\(answers) \(session.stderrSoFar)")
        #expect(await shoot(session, answers: answers.count + 1).last?.hasPrefix("photoSuccess") == true, "\(session.stderrSoFar)")
        session.send("exit\n")
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(30))
        #expect(outcome.status == 0, "\(outcome.stderr)")
        // The camera was opened once: no enter abandoned an open and started another.
        #expect(camera.logText.components(separatedBy: "opening a session slowly").count - 1 == 1, "\(camera.logText)")
    }
}
