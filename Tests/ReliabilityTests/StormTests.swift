#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeSupport
import TestSupport
import Testing

/// Case 5: event storms.
@Suite("fault: event storms", .serialized)
struct StormTests {
    @Test("captures as fast as four clients can send, with enters and exits interleaved: exactly one answer each, busy beyond the bound, exits never refused")
    func storm() async throws {
        let folder = TemporaryDirectory("chaos-storm")
        var random = Chaos.random("storm")
        let perClient = Chaos.count(ci: 250, full: 2_500)
        let socket = folder.file("s.sock"), output = folder.file("out")
        let config = try socketConfig(backend: "  type: file-stub\n  width: 64\n  height: 48\n  latency: 2ms", socket: socket, output: output,
                                      extra: "coordinator: {queueLimit: 16}", in: folder)
        let session = try await SocketSession.start(config, socket: socket, in: folder)
        var clients: [SocketLines] = []
        for _ in 0..<4 { clients.append(try await SocketLines(path: socket)) }
        var events: [Int: String] = [:]
        let started = ContinuousClock.now
        for (index, client) in clients.enumerated() {
            var lines = ""
            for number in 0..<perClient {
                let roll = Int.random(in: 0..<100, using: &random)
                let event = roll < 4 ? "enter" : roll < 8 ? "exit" : "capture"
                let id = index * 1_000_000 + number
                events[id] = event
                lines += "{\"event\":\"\(event)\",\"id\":\(id)}\n"
            }
            await client.send(lines)
        }
        var replies: [[String: Any]] = []
        for client in clients { replies += await client.replies(perClient, timeout: .seconds(120)) }
        let elapsed = ContinuousClock.now - started
        let byID = answersByID(replies)
        #expect(replies.count == events.count, "seed \(Chaos.seed): \(replies.count) answers to \(events.count) events")
        #expect(Set(byID.keys) == Set(events.keys), "nothing lost, nothing invented")
        #expect(byID.values.allSatisfy { $0.count == 1 }, "exactly one answer per event")
        let busy = replies.filter { $0["cause"] as? String == "busy" }
        #expect(!busy.isEmpty, "beyond the bound, the queue answers busy")
        #expect(busy.allSatisfy { events[$0["id"] as? Int ?? -1] != "exit" }, "exits are never refused")
        for reply in replies where events[reply["id"] as? Int ?? -1] == "exit" {
            #expect(reply["state"] as? String == "exitedOrUnableToEnter", "\(reply)")
        }
        let successes = replies.filter { $0["state"] as? String == "photoSuccess" }
        let files = successes.flatMap { $0["files"] as? [String] ?? [] }
        #expect(Set(files).count == successes.count, "no file named twice")
        #expect(folder.names("out").filter { $0.hasSuffix(".jpg") }.count == successes.count, "every success on disk, none extra")
        let stats = ProcessStats(session.pid)
        #expect(await session.stop().status == 4)  // some events failed, by design: exit 4
        Chaos.record("event storm", ["events": events.count, "answers": replies.count, "photoSuccess": successes.count, "busy": busy.count,
                                     "exits": events.values.filter { $0 == "exit" }.count, "enters": events.values.filter { $0 == "enter" }.count,
                                     "seconds": (elapsed.milliseconds / 1000 * 100).rounded() / 100, "peakKiB": stats?.peakKiB ?? 0])
    }
}
