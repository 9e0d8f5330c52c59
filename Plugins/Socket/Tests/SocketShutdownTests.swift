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
        // Each capture takes a second, so the signal surely comes while most are queued.
        let (session, path) = try await socketSession(folder, backend: "  width: 64\n  height: 48\n  latency: 1s")
        let client = try await SocketLines(path: path)
        for index in 1...6 {  // a line at a time, all before the signal
            await client.send("{\"event\":\"capture\",\"id\":\(index)}\n")
            try await Task.sleep(for: .milliseconds(5))
        }
        try await Task.sleep(for: .milliseconds(300))  // every line read; the first shot still exposing
        session.signal(SIGTERM)
        #expect(await eventually(timeout: .seconds(10)) { session.stderrSoFar.contains("stopping: answering the") }, "\(session.stderrSoFar.suffix(1000))")
        await client.send("{\"event\":\"capture\",\"id\":99}\n")
        let replies = await client.replies(7, timeout: .seconds(40))
        let answers = replies.filter { $0["state"] != nil }
        #expect(answers.count == 6 && answers.allSatisfy { $0["state"] as? String == "photoSuccess" }, "\(replies)")
        let late = replies.first { $0["error"] != nil }
        #expect((late?["error"] as? String)?.contains("the session is stopping") == true, "\(replies)")
        #expect(await session.wait().status == 0)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(folder.names("out").filter { $0.hasSuffix(".jpg") }.count == 6)
    }

    @Test("SIGHUP (a closed terminal) is a clean stop: the shot in flight is answered, the socket file goes, exit 0")
    func hangUpIsAStop() async throws {
        let folder = TemporaryDirectory("socket-hup")
        let (session, path) = try await socketSession(folder, backend: "  width: 64\n  height: 48\n  latency: 400ms")
        let client = try await SocketLines(path: path)
        await client.send("{\"event\":\"capture\",\"id\":1}\n")
        try await Task.sleep(for: .milliseconds(100))
        session.signal(SIGHUP)
        let replies = await client.replies(1, timeout: .seconds(10))
        #expect(replies.first?["state"] as? String == "photoSuccess", "\(replies) \(session.stderrSoFar.suffix(800))")
        let outcome = await session.wait()
        #expect(outcome.status == 0)
        #expect(outcome.stderr.contains("SIGHUP: finishing what is queued"))
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("a second SIGTERM stops at once, and the socket file still goes")
    func secondSignalStopsAtOnce() async throws {
        let folder = TemporaryDirectory("socket-term-twice")
        // The shot takes 30 s: stopping well before that did not wait for it, on a loaded
        // machine too (a 5 s shot left a 1 s margin, which CI's load once ate).
        let (session, path) = try await socketSession(folder, backend: "  width: 64\n  height: 48\n  latency: 30s",
                                                      coordinator: "coordinator: {captureTimeout: 60s}")
        let client = try await SocketLines(path: path)
        await client.send("{\"event\":\"capture\",\"id\":1}\n")
        try await Task.sleep(for: .milliseconds(200))
        let stopping = ContinuousClock.now
        session.signal(SIGTERM)
        #expect(await eventually(timeout: .seconds(5)) { session.stderrSoFar.contains("finishing what is queued") })
        session.signal(SIGTERM)
        let outcome = await session.wait()
        #expect(outcome.status == 130)
        #expect(ContinuousClock.now - stopping < .seconds(15), "the second signal waited for the shot")
        #expect(!FileManager.default.fileExists(atPath: path), "the socket file was left behind")
    }
}
