#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

/// A third client of a rig's broker that, when a command comes, forges node `left`'s
/// acknowledgement and a `photoSuccess` answer proven against it, and a success of a node
/// 'ghost' that never announced itself. Its stdout says "subscribed" (the gate before the
/// command), then "forged" once it has published.
func forger(_ broker: Broker, in folder: TemporaryDirectory) async throws -> RunningProcess {
    let login = broker.rigACL ? "-u intruder -P \(Broker.password(for: "intruder"))" : ""
    let script = """
    set -e
    secret=forgedsecret0123
    commit=$(printf '%s' "$secret" | sha256sum | cut -d' ' -f1)
    pub() { mosquitto_pub -h 127.0.0.1 -p \(broker.port) \(login) -q 1 -t "$1" -m "$2"; }
    stdbuf -oL mosquitto_sub -d -h 127.0.0.1 -p \(broker.port) \(login) -q 1 -t shutterpipe/test/command -C 1 -F %p | while IFS= read -r line; do
      case "$line" in
        Subscribed*) echo subscribed ;;
        "{"*)
          id=$(printf '%s' "$line" | sed -E 's/.*"id":"([^"]*)".*/\\1/')
          # The ghost first: once left's forged answer completes the set, rig capture
          # ends, and a message published after it (a process start later) may miss it.
          pub shutterpipe/test/node/ghost/state "{\\"id\\":\\"$id\\",\\"node\\":\\"ghost\\",\\"event\\":\\"capture\\",\\"state\\":\\"photoSuccess\\",\\"paths\\":[]}"
          pub shutterpipe/test/node/left/ack "{\\"id\\":\\"$id\\",\\"node\\":\\"left\\",\\"commit\\":\\"$commit\\"}"
          pub shutterpipe/test/node/left/state "{\\"id\\":\\"$id\\",\\"node\\":\\"left\\",\\"event\\":\\"capture\\",\\"state\\":\\"photoSuccess\\",\\"paths\\":[\\"./captures/left-9999.jpg\\"],\\"proof\\":\\"$secret\\"}"
          echo forged ;;
      esac
    done
    """
    return try await RunningProcess.start(program: "/bin/sh", ["-c", script], in: folder.path)
}

/// Case 11: the adversarial pass of issue 28 against rigs, one test per attack; each fails
/// on the code before its fix.
@Suite("fault: attacks on a rig", .serialized)
struct RigAttackTests {
    /// Nodes `left` (whose captures fail, or wait at `gate`) and `right`, online.
    func leftAndRight(_ broker: Broker, gate: String? = nil) async throws -> [RigNode] {
        let left = gate.map { "{type: file-stub, width: 64, height: 48, gate: \($0)}" } ?? "{type: file-stub, width: 64, height: 48, failEvery: 1}"
        let nodes = [try await RigNode("left", broker: broker, backend: left),
                     try await RigNode("right", broker: broker, backend: "{type: file-stub, width: 64, height: 48}")]
        #expect(await eventually(timeout: .seconds(60)) { nodes.allSatisfy(\.isOnline) })
        return nodes
    }

    @Test("a broker without the ACL: a forged success for 'left' (with its own acknowledgement) and one of an unknown node: rig capture reports the conflict and exits 1, never 'left photoSuccess'")
    func forgedAnswersWithoutACL() async throws {
        let broker = try await Broker("forged")
        let here = TemporaryDirectory("chaos-rig-forged")
        // Left has not answered yet (its capture waits at a gate) when the forgery comes.
        let nodes = try await leftAndRight(broker, gate: here.file("gate"))
        let intruder = try await forger(broker, in: here)
        await intruder.waitForOutput("subscribed", on: .stdout)
        let outcome = try await rig(["capture"], broker: broker, in: here)
        await intruder.waitForOutput("forged", on: .stdout)
        #expect(outcome.status == 1, "\(outcome.stdout)\n\(outcome.stderr)")
        #expect(!outcome.stdout.contains("left-9999") && !outcome.stdout.split(separator: "\n").contains { $0.hasPrefix("left") && $0.contains("photoSuccess") },
                "a forged success was reported: \(outcome.stdout)")
        #expect(outcome.stderr.contains("node 'left' gave different answers"), "\(outcome.stderr)")
        #expect(!outcome.stdout.contains("ghost") && outcome.stderr.contains("node 'ghost' answered but never announced itself"), "\(outcome.stderr)")
        #expect(nodes[0].photos.isEmpty && nodes[1].photos.count == 1)
        try "\n".writeTestFile(here.file("gate"))
        Chaos.record("rig forged answers, no ACL", ["exit": Int(outcome.status), "conflict": outcome.stderr.contains("different answers")])
    }

    @Test("under the shipped ACL the intruder's forgeries and commands never reach anyone: rig capture reports left's own photoFailed")
    func forgedAnswersUnderACL() async throws {
        let broker = try await Broker("forged-acl", rigNodes: ["left", "right"])
        let here = TemporaryDirectory("chaos-rig-acl")
        let nodes = try await leftAndRight(broker)
        let intruder = try await forger(broker, in: here)
        await intruder.waitForOutput("subscribed", on: .stdout)
        let outcome = try await rig(["capture"], broker: broker, in: here)
        await intruder.waitForOutput("forged", on: .stdout)
        #expect(outcome.status == 1)
        #expect(outcome.stderr.contains("node 'left': photoFailed") && !outcome.stderr.contains("different answers") && !outcome.stderr.contains("ghost"),
                "\(outcome.stderr)")
        // Nor may the intruder send commands.
        try await publish(#"{"id": "intruder-1", "event": "capture"}"#, to: "shutterpipe/test/command", broker: broker, as: "intruder")
        let after = try await rig(["capture"], broker: broker, in: here)
        #expect(nodes[1].photos.count == 2 && !nodes.contains { $0.session.stderrSoFar.contains("intruder-1") }, "\(after.stdout)")
        Chaos.record("rig forged answers, ACL", ["exit": Int(outcome.status), "intruderCommandsTaken": 0])
    }

    @Test("a retained capture: every node answers it stale at each start and restart, and takes no photo")
    func retainedCommand() async throws {
        let broker = try await Broker("retained", rigNodes: ["left", "right"])
        let here = TemporaryDirectory("chaos-rig-retained")
        try await publish(#"{"id": "kept-1", "event": "capture"}"#, to: "shutterpipe/test/command", broker: broker, retained: true)
        let watcher = try await StateWatcher(broker, in: here)
        var nodes = try await leftAndRight(broker)
        let firstRight = nodes[1]
        #expect(await eventually(timeout: .seconds(60)) { ["left", "right"].allSatisfy { watcher.states[$0]?["state"] as? String == "stale" } })
        // A restart meets the same retained command: stale again, still no photo.
        nodes[1].session.signal(SIGTERM)
        #expect(await nodes[1].session.wait(timeout: .seconds(60)).status == 0)
        let again = try await RigNode("right", broker: broker, backend: "{type: file-stub, width: 64, height: 48}")
        nodes[1] = again
        #expect(await eventually(timeout: .seconds(60)) { again.session.stderrSoFar.contains("command 'kept-1' (capture) was retained") })
        let photos = (nodes + [firstRight]).map(\.photos.count).reduce(0, +)
        #expect(photos == 0, "a retained command took \(photos) photo(s)")
        Chaos.record("rig retained command", ["photos": photos, "starts": 3])
    }

    @Test("a capture 8 s ahead ('at') does not hold the node: its socket trigger is answered at once meanwhile, and the rig capture (sent with an expiry) fires on time")
    func atDoesNotBlock() async throws {
        let broker = try await Broker("at-block", rigNodes: ["node"])
        let here = TemporaryDirectory("chaos-rig-at")
        let socket = here.file("s.sock")
        let node = try await RigNode("node", broker: broker, backend: "{type: file-stub, width: 64, height: 48}", triggers: ["{type: socket, path: \(socket)}"],
                               verbose: true)
        #expect(await eventually(timeout: .seconds(60)) { node.isOnline })
        // What rig capture sends, as a node's user reads it.
        let listener = try await RunningProcess.start(program: "/usr/bin/stdbuf",
                                          ["-oL", "mosquitto_sub", "-d", "-h", "127.0.0.1", "-p", String(broker.port), "-u", "node", "-P",
                                           Broker.password(for: "node"), "-q", "1", "-t", "shutterpipe/test/command", "-C", "1", "-F", "%p"], in: here.path)
        await listener.waitForOutput("Subscribed", on: .stdout)
        async let fired = rig(["capture", "--at", "+8s"], broker: broker, in: here)
        // The node has the command: waiting for its moment, or (before the fix) already in
        // the coordinator, which then held every trigger until that moment.
        await node.session.waitForOutput("the rig's command", timeout: .seconds(60)) { $0.contains("goes to the camera") || $0.contains("capture from mqtt") }
        let client = try await SocketLines(path: socket)
        let asked = ContinuousClock.now
        await client.send("{\"event\":\"capture\",\"id\":1}\n")
        let reply = await client.replies(1).first
        let waited = (ContinuousClock.now - asked) / .seconds(1)
        #expect(reply?["state"] as? String == "photoSuccess")
        // Before the fix it waited for the rig's moment (8 s).
        #expect(waited < 3, "the socket capture waited \(waited) s behind a rig capture's 'at'")
        let outcome = try await fired
        #expect(outcome.status == 0, "\(outcome.stdout) \(outcome.stderr)")
        // Always an expiry: the moment plus rig's --timeout (30 s here).
        let sent = await listener.wait(timeout: .seconds(30)).stdout.split(separator: "\n").last { $0.hasPrefix("{") } ?? ""
        let command = (try? JSONSerialization.jsonObject(with: Data(sent.utf8))) as? [String: Any]
        let at = (command?["at"] as? NSNumber)?.doubleValue ?? 0, expires = (command?["expires"] as? NSNumber)?.doubleValue ?? 0
        #expect(at > 0 && abs(expires - at - 30_000) < 1, "\(sent)")
        Chaos.record("rig at does not block", ["socketAnswerS": waited, "rigExit": Int(outcome.status)])
    }

    @Test("a 64 MB publish on the command topic adds less than 8 MB to a node (the broker drops it: the node said 8 KB at connect), and the node goes on")
    func hugePublish() async throws {
        let broker = try await Broker("huge", rigNodes: ["node"])
        let here = TemporaryDirectory("chaos-rig-huge")
        let node = try await RigNode("node", broker: broker, backend: "{type: file-stub, width: 64, height: 48}")
        #expect(await eventually(timeout: .seconds(60)) { node.isOnline })
        let first = try await rig(["capture"], broker: broker, in: here)
        #expect(first.status == 0)
        let before = try #require(ProcessStats(node.session.pid))
        let huge = here.file("huge.bin")
        try Data(repeating: 0x7B, count: 64 << 20).writeTestFile(huge)
        try await publish(file: huge, to: "shutterpipe/test/command", broker: broker)
        try FileManager.default.removeItem(atPath: huge)
        // The next command is answered: whatever the broker did with the big one is over.
        let next = try await rig(["capture"], broker: broker, in: here)
        #expect(next.status == 0, "\(next.stdout) \(next.stderr)")
        let after = try #require(ProcessStats(node.session.pid))
        let grownMB = Double(after.peakKiB - before.peakKiB) / 1024
        #expect(grownMB < 8, "the node's peak memory grew by \(grownMB) MB")
        Chaos.record("rig 64 MB publish", ["nodePeakGrowthMB": grownMB])
    }

    @Test("control characters from MQTT: a newline in a command's id and event forges no log line; ESC sequences in an answer reach neither rig status nor rig capture raw")
    func controlCharacters() async throws {
        let broker = try await Broker("controls")
        let here = TemporaryDirectory("chaos-rig-controls")
        let node = try await RigNode("node", broker: broker, backend: "{type: file-stub, width: 64, height: 48}")
        #expect(await eventually(timeout: .seconds(60)) { node.isOnline })
        let forged = "09:00:00.000 [coordinator] ok"
        try await publish(#"{"id": "x\n\#(forged)", "event": "jump\n\#(forged)\u001b[2J"}"#, to: "shutterpipe/test/command", broker: broker)
        // The node's answer (an error: no such event) is on its state topic before the forged one.
        let watcher = try await StateWatcher(broker, in: here)
        #expect(await eventually(timeout: .seconds(60)) { (watcher.states["node"]?["error"] as? String)?.contains("unknown event") == true })
        // Another client's retained answer full of escape sequences, on a broker without the ACL.
        try await publish(#"{"id": "old", "node": "node", "state": "photoSuccess\u001b]0;pwned\u0007", "paths": ["\u001b[2J/x.jpg"], "message": "a\nb"}"#,
                          to: "shutterpipe/test/node/node/state", broker: broker, retained: true)
        let status = try await rig(["status"], broker: broker, in: here)
        #expect(status.stdout.contains("node") && !status.stdout.contains("\u{1b}") && !status.stdout.contains("\u{07}"), "\(status.stdout)")
        #expect(status.stdout.contains("\\x1b[2J/x.jpg"), "\(status.stdout)")
        node.session.signal(SIGTERM)
        let log = await node.session.wait(timeout: .seconds(60)).stderr
        #expect(!log.split(separator: "\n").contains { $0.hasPrefix(forged) } && !log.contains("\u{1b}"), "\(log)")
    }
}
