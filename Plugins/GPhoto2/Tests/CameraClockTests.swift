#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import GPhoto2Camera
import Testing
import TestSupport

@Suite("camera clock: syncClock sets it from the host's at every open", .timeLimit(.minutes(3)))
struct CameraClockTests {
    @Test("offsets read as people say them")
    func describing() {
        #expect(CameraClock.describe(0.3) == "in step with")
        #expect(CameraClock.describe(-3) == "3 s behind")
        #expect(CameraClock.describe(93_784) == "1 d 2 h 3 min 4 s ahead of")
        #expect(CameraClock.describe(-337 * 86_400) == "337 d behind")
    }

    @Test("a camera whose clock is months off is set from the host at enter, saying how far off it was; at the next open it is in step (within the seconds between the two)")
    func syncAtOpen() async throws {
        // The virtual camera's clock says 2026-01-01 00:00:00 and does not run.
        let camera = try await FakeCamera()
        let folder = TemporaryDirectory("clock")
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out"), backend: "  syncClock: true"), in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        let host = Date().timeIntervalSince1970
        #expect(await shoot(session, "enter", answers: 1).last == "enteredPhotoMode", "\(session.stderrSoFar)")
        let first = try #require(session.stderrSoFar.split(separator: "\n").first { $0.contains("camera clock was") })
        // 2026-01-01T00:00:00 by the camera's clock (libgphoto2 reads it in local time: a day either way).
        let days = Int((host - 1_767_225_600) / 86_400)
        let said = first.firstMatch(of: #/camera clock was (\d+) d /#).flatMap { Int($0.output.1) } ?? -1
        #expect(abs(said - days) <= 1 && first.contains("behind this host's; set from the host (syncClock)"), "\(first)")
        #expect(count("property 0x5011 set", in: camera.logText) == 1)
        #expect(await shoot(session, "exit", answers: 2).last == "exitedOrUnableToEnter")
        #expect(await shoot(session, "enter", answers: 3).last == "enteredPhotoMode")
        let second = try #require(session.stderrSoFar.split(separator: "\n").filter { $0.contains("camera clock was") }.dropFirst().first)
        // The camera's clock stood still since it was set: behind by the seconds between the opens, no more.
        let behind = second.contains("in step with") ? 0 : Int(second.split(separator: " ").drop { !$0.hasPrefix("was") }.dropFirst().first ?? "") ?? 999
        #expect(behind < 60 && !second.contains(" d ") && !second.contains(" h ") && !second.contains(" min "), "\(second)")
        session.send("exit\n")
        session.closeInput()
        #expect(await session.wait(timeout: .seconds(30)).status == 0)
    }
}
