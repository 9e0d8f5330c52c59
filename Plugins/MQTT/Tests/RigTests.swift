#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

/// Three nodes, one broker: what a rig does, command by command, as an operator drives it.
/// One test at a time: each starts a broker and several sessions, and all at once they
/// would crowd out the rest of the suite on 2 cores.
@Suite("mqtt rig: nodes through a real mosquitto", .serialized, .timeLimit(.minutes(5)))
struct RigTests {
    @Test("three nodes answer rig captures and store their photos; a command sent twice takes one photo; bad and late commands are answered and take none, and the nodes go on")
    func threeNodes() async throws {
        let broker = try await Broker("three", rigNodes: ["a", "b", "c"])
        let here = TemporaryDirectory("rig-three")
        let nodes = try await RigNode.several(["a", "b", "c"], broker: broker)
        #expect(await eventually(timeout: .seconds(60)) { nodes.allSatisfy(\.isOnline) }, "\(nodes.map { $0.session.stderrSoFar })")
        let watcher = try await StateWatcher(broker, in: here)
        #expect(await eventually(timeout: .seconds(60)) { watcher.online.filter(\.value).count == 3 })
        let status = try await rig(["status"], broker: broker, in: here)
        #expect(status.status == 0 && ["a", "b", "c"].allSatisfy { name in status.lines.contains { $0.hasPrefix(name) && $0.contains("online") && $0.contains(" ms ±") } },
                "\(status.stdout) \(status.stderr) \(nodes[0].session.stderrSoFar)")
        // Every node's clock, read through the broker: here all share this host's, so each
        // offset is within its half round trip (and a little for the scheduler).
        let clocks = try await rigStatus(broker, in: here)
        for name in ["a", "b", "c"] {
            let offset = (clocks[name]?["clockOffset"] as? Double) ?? .infinity, uncertainty = (clocks[name]?["clockUncertainty"] as? Double) ?? .infinity
            #expect(uncertainty >= 0 && uncertainty < 5_000 && abs(offset) <= uncertainty + 50, "\(name): \(clocks[name] ?? [:])")
        }

        // A capture: every node answers, with its path; --json gives every field.
        let fired = try await rig(["capture", "--json"], broker: broker, in: here)
        #expect(fired.status == 0, "\(fired.stdout) \(fired.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(fired.stdout.utf8)) as? [String: Any])
        let answers = try #require(report["nodes"] as? [[String: Any]])
        #expect(answers.count == 3 && answers.allSatisfy { $0["state"] as? String == "photoSuccess" && ($0["capturedAt"] as? Double ?? 0) > 1.7e12 })
        for answer in answers {
            let path = try #require((answer["paths"] as? [String])?.first)
            #expect(FileManager.default.fileExists(atPath: path), "\(answer)")
        }
        #expect(report["spread"] is Double)
        #expect(nodes.allSatisfy { $0.photos.count == 1 })

        // Fire-at: the table has each node's offset, and the spread line.
        let scheduled = try await rig(["capture", "--at", "+300ms"], broker: broker, in: here)
        #expect(scheduled.status == 0 && scheduled.lines.last?.hasPrefix("spread: ") == true && scheduled.lines.filter { $0.contains("photoSuccess") && $0.contains(" ms") }.count == 3,
                "\(scheduled.stdout)")
        #expect(nodes.allSatisfy { $0.photos.count == 2 })

        // The same command twice (a redelivery, or a script sending it again): one photo.
        let command = RigTopic.command("test")
        try await publish(#"{"id": "twice-1", "event": "capture"}"#, to: command, broker: broker)
        #expect(await eventually(timeout: .seconds(60)) { nodes.allSatisfy { $0.photos.count == 3 } })
        try await publish(#"{"id": "twice-1", "event": "capture"}"#, to: command, broker: broker)
        #expect(await eventually(timeout: .seconds(60)) { nodes.allSatisfy { $0.session.stderrSoFar.contains("command 'twice-1' arrived again") } })
        #expect(nodes.allSatisfy { $0.photos.count == 3 })

        // Larger than a node takes (8 KB, said at connect): the broker never delivers it.
        // The nodes take no photo (counted below) and answer what follows.
        let huge = here.file("huge.json")
        try Data(#"{"id": "huge", "event": "capture", "pad": ""#.utf8 + Data(repeating: 0x61, count: 1_000_000) + Data(#""}"#.utf8))
            .writeTestFile(huge)
        try await publish(file: huge, to: command, broker: broker)
        // Bad inputs, one at a time: each node answers each with an error (a command over
        // 4 KB, and under the 8 KB packet limit, is read and refused).
        let big = here.file("big.json")
        try Data(#"{"id": "big", "event": "capture", "pad": ""#.utf8 + Data(repeating: 0x61, count: 6000) + Data(#""}"#.utf8))
            .writeTestFile(big)
        for (payload, file, says) in [("{not json", nil, "malformed command"), (#"{"id": "j1", "event": "jump"}"#, nil, "unknown event 'jump'"),
                                      (nil, big, "too large"), (#"{"event": "capture"}"#, nil, "'id' is missing"),
                                      (#"{"id": "far", "event": "capture", "at": \#((Date().timeIntervalSince1970 + 3600) * 1000)}"#, nil, "at most 60 s")]
                                     as [(String?, String?, String)] {
            try await publish(payload, file: file, to: command, broker: broker)
            #expect(await eventually(timeout: .seconds(60)) {
                let states = watcher.states
                return ["a", "b", "c"].allSatisfy { (states[$0]?["error"] as? String)?.contains(says) == true }
            }, "\(says)")
        }

        // Late: after its 'at' (plus lateAfter), or after 'expires': photoFailed, timeout, no photo.
        let now = Date().timeIntervalSince1970 * 1000
        for (id, field) in [("late-1", "\"at\": \(now - 5000)"), ("expired-1", "\"expires\": \(now - 1000)")] {
            try await publish(#"{"id": "\#(id)", "event": "capture", \#(field)}"#, to: command, broker: broker)
            #expect(await eventually(timeout: .seconds(60)) {
                let states = watcher.states
                return ["a", "b", "c"].allSatisfy { name in
                    let last = states[name]
                    return last?["id"] as? String == id && last?["state"] as? String == "photoFailed" && last?["cause"] as? String == "timeout"
                        && (last?["message"] as? String)?.contains("came late") == true
                }
            }, "\(id)")
        }
        #expect(nodes.allSatisfy { $0.photos.count == 3 })

        // Every node is still running and answers the next capture.
        let after = try await rig(["capture"], broker: broker, in: here)
        #expect(after.status == 0 && nodes.allSatisfy { $0.photos.count == 4 && $0.session.isRunning }, "\(after.stdout) \(after.stderr)")
        for node in nodes { node.session.signal(SIGTERM) }
        for node in nodes { #expect(await node.session.wait(timeout: .seconds(60)).status == 0) }
        // A node that stops on purpose says so: offline, not a stale "online".
        let ended = try await rigStatus(broker, in: here)
        #expect(["a", "b", "c"].allSatisfy { ended[$0]?["online"] as? Bool == false }, "\(ended)")
    }

    @Test("after a broker restart the nodes are back on their own; a node killed with kill -9 goes offline through its last will, and rig capture names it")
    func outages() async throws {
        let broker = try await Broker("outage", rigNodes: ["a", "b"])
        let here = TemporaryDirectory("rig-outage")
        let a = try await RigNode("a", broker: broker), b = try await RigNode("b", broker: broker)
        #expect(await eventually(timeout: .seconds(60)) { a.isOnline && b.isOnline })
        #expect(try await rig(["capture"], broker: broker, in: here).status == 0)

        await broker.stop()
        #expect(await eventually(timeout: .seconds(60)) { [a, b].allSatisfy { $0.session.stderrSoFar.contains("lost the broker") } })
        let down = try await rig(["capture", "--timeout", "2s"], broker: broker, in: here)
        #expect(down.status == 1 && down.stderr.contains("cannot reach the broker"), "\(down.stderr)")
        try await broker.start()
        #expect(await eventually(timeout: .seconds(60)) { [a, b].allSatisfy { $0.session.stderrSoFar.contains("reconnected to the broker") } },
                "\(a.session.stderrSoFar)")
        let back = try await rig(["capture"], broker: broker, in: here)
        #expect(back.status == 0 && a.photos.count == 2 && b.photos.count == 2, "\(back.stdout) \(back.stderr)")

        let watcher = try await StateWatcher(broker, in: here)
        kill(b.session.pid, SIGKILL)
        #expect(await eventually(timeout: .seconds(60)) { watcher.online["b"] == false })
        let partial = try await rig(["capture"], broker: broker, in: here)
        #expect(partial.status == 1 && partial.stderr.contains("node 'b' is offline") && partial.lines.contains { $0.hasPrefix("b") && $0.contains("offline") },
                "\(partial.stdout) \(partial.stderr)")
        #expect(a.photos.count == 3)
    }

    @Test("a node that is online but answers after --timeout is named, and the exit is 1; its answer comes later all the same")
    func slowNode() async throws {
        let broker = try await Broker("slow", rigNodes: ["quick", "slow"])
        let here = TemporaryDirectory("rig-slow")
        // The slow node's shot is held at a gate until the rig command has given up on it;
        // the quick one has the whole --timeout to answer, however loaded the machine.
        let gate = try FileGate(in: here)
        let quick = try await RigNode("quick", broker: broker), slow = try await RigNode("slow", broker: broker, backend: "{type: file-stub, gate: \(gate.path)}")
        #expect(await eventually(timeout: .seconds(60)) { quick.isOnline && slow.isOnline })
        let fired = try await rig(["capture", "--timeout", "20s"], broker: broker, in: here)
        #expect(fired.status == 1 && fired.stderr.contains("node 'slow' did not answer in time") && fired.lines.contains { $0.hasPrefix("slow") && $0.contains("no answer") }
                && fired.lines.contains { $0.hasPrefix("quick") && $0.contains("photoSuccess") }, "\(fired.stdout) \(fired.stderr)")
        try gate.release()
        #expect(await eventually(timeout: .seconds(60)) { slow.photos.count == 1 })
    }

    @Test("a broker with a password file: the node's password from ${ENV} works, a wrong one is refused with the fix, and so is a client without one")
    func credentials() async throws {
        let broker = try await Broker("users", users: ["studio": "s3cret", "operator": "0p"])
        let here = TemporaryDirectory("rig-users")
        let good = try await RigNode("good", broker: broker, extra: ", username: studio, password: \"${RIG_PASSWORD}\"", environment: ["RIG_PASSWORD": "s3cret"])
        let bad = try await RigNode("bad", broker: broker, extra: ", username: studio, password: wrong")
        #expect(await eventually(timeout: .seconds(60)) { good.isOnline })
        #expect(await eventually(timeout: .seconds(60)) { bad.session.stderrSoFar.contains("refused this node") && bad.session.stderrSoFar.contains("check 'username' and 'password'") },
                "\(bad.session.stderrSoFar)")
        try "0p\n".writeTestFile(here.file("password"))
        let fired = try await rig(["capture", "--username", "operator", "--password-file", here.file("password")], broker: broker, in: here)
        #expect(fired.status == 0 && fired.lines.contains { $0.hasPrefix("good") && $0.contains("photoSuccess") } && good.photos.count == 1,
                "\(fired.stdout) \(fired.stderr)")
        #expect(bad.photos.isEmpty && bad.session.isRunning)
        let anonymous = try await rig(["status"], broker: broker, in: here)
        #expect(anonymous.status == 1 && anonymous.stderr.contains("refused the connection"), "\(anonymous.stderr)")
    }

    @Test("TLS: mqtts:// with a CA file made by the test; without the CA the rig command says the certificate is not trusted")
    func tls() async throws {
        let broker = try await Broker("tls", tls: true)
        let here = TemporaryDirectory("rig-tls")
        let node = try await RigNode("secure", broker: broker)
        #expect(await eventually(timeout: .seconds(60)) { node.isOnline }, "\(node.session.stderrSoFar) \(broker.log)")
        let fired = try await rig(["capture"], broker: broker, in: here)
        #expect(fired.status == 0 && node.photos.count == 1, "\(fired.stdout) \(fired.stderr)")
        let untrusted = try await rig(["status", "--ca", "/etc/ssl/certs/ca-certificates.crt", "--timeout", "3s"], broker: broker, in: here)
        #expect(untrusted.status == 1 && untrusted.stderr.contains("certificate verify failed") && untrusted.stderr.contains("--ca"),
                "\(untrusted.stdout) \(untrusted.stderr)")
    }
}

@Suite("mqtt rig: fire-at", .timeLimit(.minutes(2)))
struct FireAtTests {
    @Test("a capture with 'at' fires then, not when it arrives: on file-stub, and on real libgphoto2 whose camera thread waits for the moment")
    func fireAt() async throws {
        let broker = try await Broker("fire-at", rigNodes: ["stub", "tethered"])
        let here = TemporaryDirectory("rig-fire-at")
        let camera = try await FakeCamera()
        let stub = try await RigNode("stub", broker: broker)
        let tethered = try await RigNode("tethered", broker: broker, backend: "{type: gphoto2, port: \"\(camera.portSpec)\"}",
                                   environment: ["HOME": camera.home.path])
        #expect(await eventually(timeout: .seconds(60)) { stub.isOnline && tethered.isOnline })
        #expect(try await rig(["enter"], broker: broker, in: here).status == 0)
        let watcher = try await StateWatcher(broker, in: here)
        #expect(await eventually(timeout: .seconds(60)) { watcher.online.filter(\.value).count == 2 })
        for shot in 1...3 {
            // Three seconds ahead: a command that arrives after its moment is refused as late
            // (rightly), and on a loaded machine the broker and the nodes took over a second.
            let at = (Date().timeIntervalSince1970 + 3) * 1000
            try await publish(#"{"id": "at-\#(shot)", "event": "capture", "at": \#(at)}"#, to: RigTopic.command("test"), broker: broker)
            let answered: @Sendable () async -> [String: Double]? = {
                let states = watcher.states
                var captured: [String: Double] = [:]
                for name in ["stub", "tethered"] {
                    guard let last = states[name], last["id"] as? String == "at-\(shot)" else { return nil }
                    guard let time = last["capturedAt"] as? Double else {
                        Issue.record("\(name) took no photo for at-\(shot): \(last)")
                        return [:]
                    }
                    captured[name] = time
                }
                return captured
            }
            #expect(await eventually(timeout: .seconds(60)) { await answered() != nil })
            let captured = await answered() ?? [:]
            #expect(captured.count == 2)
            // Not before its moment, and not when it arrived (a second earlier): within
            // half a second after, even on a loaded machine.
            for (name, time) in captured {
                #expect(time >= at && time < at + 500, "\(name): captured \(time - at) ms after its moment")
            }
        }
        #expect(stub.photos.count == 3 && tethered.photos.count == 3)
    }
}

enum RigTopic {
    static func command(_ rig: String) -> String { "shutterpipe/\(rig)/command" }
}
