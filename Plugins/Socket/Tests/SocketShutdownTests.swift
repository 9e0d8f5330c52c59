#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

@Suite("socket trigger: stopping", .timeLimit(.minutes(2)))
struct SocketShutdownTests {
    @Test("SIGTERM with socket events queued: the client gets every answer, a later request is refused, the socket file goes")
    func termAnswersWhatIsQueued() async throws {
        let folder = TemporaryDirectory("socket-term")
        // The first shot is held at a gate until the signal has come: six are surely
        // queued then, however slow the machine.
        let gate = try FileGate(in: folder)
        let (session, path) = try await socketSession(folder, backend: "  width: 64\n  height: 48\n  gate: \(gate.path)", arguments: ["--verbose"])
        let client = try await SocketLines(path: path)
        for index in 1...6 {  // a line at a time, all before the signal
            await client.send("{\"event\":\"capture\",\"id\":\(index)}\n")
            await session.waitForOutput(on: .stderr, "capture \(index) received") {
                $0.components(separatedBy: "capture from socket received").count - 1 == index
            }
        }
        await session.waitForOutput("capture 1 waits at the gate")
        session.signal(SIGTERM)
        await session.waitForOutput("stopping: answering the 6 request(s)")
        await client.send("{\"event\":\"capture\",\"id\":99}\n")
        #expect(await eventually { client.lines.count == 1 }, "the late request is answered at once, before any shot")
        try gate.release(6)
        let replies = await client.replies(7, timeout: .seconds(60))
        let answers = replies.filter { $0["state"] != nil }
        #expect(answers.count == 6 && answers.allSatisfy { $0["state"] as? String == "photoSuccess" }, "\(replies)")
        let late = replies.first { $0["error"] != nil }
        #expect((late?["error"] as? String)?.contains("the session is stopping") == true, "\(replies)")
        #expect(await session.wait(timeout: .seconds(60)).status == 0)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(folder.names("out").filter { $0.hasSuffix(".jpg") }.count == 6)
    }

    @Test("SIGHUP (a closed terminal) is a clean stop: the shot in flight is answered, the socket file goes, exit 0")
    func hangUpIsAStop() async throws {
        let folder = TemporaryDirectory("socket-hup")
        let gate = try FileGate(in: folder)
        let (session, path) = try await socketSession(folder, backend: "  width: 64\n  height: 48\n  gate: \(gate.path)")
        let client = try await SocketLines(path: path)
        await client.send("{\"event\":\"capture\",\"id\":1}\n")
        await session.waitForOutput("capture 1 waits at the gate")
        session.signal(SIGHUP)
        await session.waitForOutput("SIGHUP: finishing what is queued")
        try gate.release()
        let replies = await client.replies(1, timeout: .seconds(30))
        #expect(replies.first?["state"] as? String == "photoSuccess", "\(replies) \(session.stderrSoFar.suffix(800))")
        let outcome = await session.wait(timeout: .seconds(60))
        #expect(outcome.status == 0)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("a second SIGTERM stops at once, and the socket file still goes")
    func secondSignalStopsAtOnce() async throws {
        let folder = TemporaryDirectory("socket-term-twice")
        // The shot is held at a gate that is never released: only the second signal can
        // end the session, however slow the machine.
        let gate = try FileGate(in: folder)
        let (session, path) = try await socketSession(folder, backend: "  width: 64\n  height: 48\n  gate: \(gate.path)",
                                                      coordinator: "coordinator: {captureTimeout: 600s}")
        let client = try await SocketLines(path: path)
        await client.send("{\"event\":\"capture\",\"id\":1}\n")
        await session.waitForOutput("capture 1 waits at the gate")
        session.signal(SIGTERM)
        await session.waitForOutput("finishing what is queued")
        session.signal(SIGTERM)
        let outcome = await session.wait(timeout: .seconds(60), for: "the second signal to stop the session at once")
        #expect(outcome.status == 130)
        #expect(!FileManager.default.fileExists(atPath: path), "the socket file was left behind")
    }
}
