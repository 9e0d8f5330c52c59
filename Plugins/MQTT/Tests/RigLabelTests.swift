import Foundation
import ShutterPipeKit
import TestSupport
import Testing

@Suite("rig labels: one label for every node of a rig", .timeLimit(.minutes(3)))
struct RigLabelTests {
    @Test("`rig label --text` sets the session label on every node (each answers labelled); the next rig capture's shots carry it in each node's catalogue; a label over 200 characters is refused by every node, the label stays")
    func labelEveryNode() async throws {
        let broker = try await Broker("label", rigNodes: ["a", "b"])
        let here = TemporaryDirectory("rig-label")
        let nodes = try await RigNode.several(["a", "b"], broker: broker)
        #expect(await eventually(timeout: .seconds(60)) { nodes.allSatisfy(\.isOnline) }, "\(nodes.map { $0.session.stderrSoFar })")
        let watcher = try await StateWatcher(broker, in: here)
        #expect(await eventually(timeout: .seconds(60)) { watcher.online.filter(\.value).count == 2 })

        let labelled = try await rig(["label", "--text", "ORDER-7", "--json"], broker: broker, in: here)
        #expect(labelled.status == 0, "\(labelled.stdout) \(labelled.stderr)")
        let answers = (try JSONSerialization.jsonObject(with: Data(labelled.stdout.utf8)) as? [String: Any])?["nodes"] as? [[String: Any]] ?? []
        #expect(answers.count == 2 && answers.allSatisfy { $0["state"] as? String == "labelled" }, "\(labelled.stdout)")
        let fired = try await rig(["capture"], broker: broker, in: here)
        #expect(fired.status == 0, "\(fired.stdout) \(fired.stderr)")
        let refused = try await rig(["label", "--text", String(repeating: "x", count: 201)], broker: broker, in: here)
        #expect(refused.status == 1 && refused.stderr.contains("labelRefused"), "\(refused.stdout) \(refused.stderr)")
        #expect(try await rig(["capture"], broker: broker, in: here).status == 0)
        for node in nodes {
            let config = node.folder.file("studio.yaml")
            #expect(await eventually {
                let listed = try? await shutterpipe(["shots", "--config", config, "--json", "--session-label", "ORDER-7"], in: node.folder.path)
                return (try? JSONSerialization.jsonObject(with: Data((listed?.stdout ?? "").utf8)) as? [[String: Any]])?.count == 2
            }, "node \(node.name): \(node.session.stderrSoFar)")
        }
        #expect(nodes.allSatisfy { $0.session.stderrSoFar.contains("label 'ORDER-7' from mqtt") })
    }

    @Test("`rig sequence --text lapse` runs the sequence each node plans on every node; each answers once it has ended, sequenceDone with its three frames' files, and the rig exits 0; a node that does not plan it answers sequenceRefused with the names it does, and the rig names that node and exits 1")
    func sequenceEveryNode() async throws {
        let broker = try await Broker("sequence", rigNodes: ["a", "b"])
        let here = TemporaryDirectory("rig-sequence")
        let plan = "{lapse: {kind: interval, frames: 3, every: 300ms}}"
        let nodes = [try await RigNode("a", broker: broker, sequences: plan), try await RigNode("b", broker: broker, sequences: plan)]
        #expect(await eventually(timeout: .seconds(60)) { nodes.allSatisfy(\.isOnline) }, "\(nodes.map { $0.session.stderrSoFar })")
        let watcher = try await StateWatcher(broker, in: here)
        #expect(await eventually(timeout: .seconds(60)) { watcher.online.filter(\.value).count == 2 })

        let ran = try await rig(["sequence", "--text", "lapse", "--json"], broker: broker, in: here)
        #expect(ran.status == 0, "\(ran.stdout) \(ran.stderr)")
        let answers = (try JSONSerialization.jsonObject(with: Data(ran.stdout.utf8)) as? [String: Any])?["nodes"] as? [[String: Any]] ?? []
        // Each frame taken, or (on a machine too busy to fire it within its period) skipped
        // and said in the node's summary: never lost.
        #expect(answers.count == 2 && answers.allSatisfy { $0["state"] as? String == "sequenceDone" }, "\(ran.stdout)")
        for node in nodes {
            let answer = answers.first { $0["node"] as? String == node.name } ?? [:]
            let paths = answer["paths"] as? [String] ?? [], summary = answer["summary"] as? String ?? ""
            let skipped = summary.firstMatch(of: #/, (\d+) skipped/#).flatMap { Int($0.1) } ?? 0
            #expect(summary.hasPrefix("sequenceDone lapse: \(paths.count) of 3 taken") && paths.count + skipped == 3 && !paths.isEmpty, "node \(node.name): \(answer)")
            #expect(node.photos.count == paths.count && paths.allSatisfy { FileManager.default.fileExists(atPath: $0) }, "node \(node.name): \(node.photos), \(paths)")
        }

        let refused = try await rig(["sequence", "--text", "stack"], broker: broker, in: here)
        #expect(refused.status == 1, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.stderr.contains("node 'a': sequenceRefused") && refused.stderr.contains("no sequence 'stack' in the config (the sequences are: lapse)"), "\(refused.stderr)")
        let usage = try await rig(["sequence"], broker: broker, in: here)
        #expect(usage.status == 2 && usage.stderr.contains("sequence needs the sequence's name in --text"), "\(usage.stderr)")
    }
}
