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
        let nodes = try ["a", "b"].map { try RigNode($0, broker: broker) }
        #expect(await eventually(timeout: .seconds(60)) { nodes.allSatisfy(\.isOnline) }, "\(nodes.map { $0.session.stderrSoFar })")
        let watcher = try StateWatcher(broker, in: here)
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
}
