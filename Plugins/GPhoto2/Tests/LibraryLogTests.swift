import Foundation
import TestSupport
import Testing

/// libgphoto2 prints its own complaints on stderr (a camera gone: "connect cmd: Connection
/// refused"). They come through the camera worker into our log as records, so that
/// `--log-format json` stays one JSON object per line.
@Suite("libgphoto2's own output goes through the log (real libgphoto2)", .timeLimit(.minutes(2)))
struct LibraryLogTests {
    @Test("a camera that vanishes mid-session: with --log-format json --verbose every stderr line is one JSON object, libgphoto2's lines among them")
    func jsonStaysJSON() async throws {
        let folder = TemporaryDirectory("library-log")
        let camera = try await FakeCamera()
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out")), in: folder)
        let session = try await RunningProcess.start(["run", "--config", config, "--log-format", "json", "--verbose"], in: folder.path,
                                         environment: ["HOME": camera.home.path])
        #expect(await shoot(session, answers: 1).last?.hasPrefix("photoSuccess") == true, "\(session.stderrSoFar)")
        await camera.stop()
        // The camera is gone: the next shot fails, and libgphoto2 complains while the
        // worker tries to reconnect.
        #expect(await shoot(session, answers: 2).last?.hasPrefix("photoFailed") == true, "\(session.stderrSoFar)")
        #expect(await eventually(timeout: .seconds(60)) { session.stderrSoFar.contains("connect cmd") || session.stderrSoFar.contains("cmdfd") },
                "\(session.stderrSoFar)")
        session.send("exit\n")
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(30))
        let lines = outcome.stderr.split(separator: "\n")
        let records = lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
        #expect(!lines.isEmpty && records.count == lines.count, "not JSON: \(lines.filter { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) == nil }.prefix(3))")
        let library = records.filter { ($0["message"] as? String)?.hasPrefix("camera worker 'camera': ") == true }
        // libgphoto2's own words: "sendreq/write to cmdfd: Broken pipe", "connect cmd: Connection refused".
        #expect(library.contains { ($0["message"] as? String).map { $0.contains("cmdfd") || $0.contains("connect cmd") } == true }, "\(library.prefix(3))")
        #expect(!library.isEmpty && library.allSatisfy { $0["level"] as? String == "debug" && $0["camera"] as? String == "camera" }, "\(library.prefix(3))")
    }
}
