import Foundation
import ShutterPipeKit
import Synchronization

/// One answer from a node's state topic.
struct RigAnswer: Sendable, Equatable {
    var id: String?
    var node: String
    var event: String?
    var state: String?
    var error: String?
    var cause: String?
    var message: String?
    var paths: [String]
    var capturedAt: Double?
    /// For a sequence: the node's summary (`sequenceDone spin: 35 of 36 taken, 1 skipped`).
    var summary: String?
    /// The secret whose SHA-256 the node's acknowledgement committed to.
    var proof: String?
    /// The node the payload names (the topic's, unless another client wrote it).
    var named: String?

    /// What the answer says, without its proof: two answers that say the same do not conflict.
    var substance: RigAnswer {
        var copy = self
        copy.proof = nil
        return copy
    }

    init?(_ payload: Data, node: String) {
        guard let object = (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any] else { return nil }
        id = object["id"] as? String
        self.node = node
        named = object["node"] as? String
        proof = object["proof"] as? String
        event = object["event"] as? String
        state = object["state"] as? String
        error = object["error"] as? String
        cause = object["cause"] as? String
        message = object["message"] as? String
        paths = object["paths"] as? [String] ?? []
        capturedAt = (object["capturedAt"] as? NSNumber)?.doubleValue
        summary = object["summary"] as? String
    }
}

/// The `rig` command's connection: it learns the rig's nodes from the retained presence
/// and state topics, publishes a command and collects the answers. Blocking; run it on a
/// thread of its own.
final class RigSession: Sendable {
    /// A node as the presence and state topics describe it.
    struct Node: Sendable, Equatable {
        var name: String
        var online: Bool
        var last: RigAnswer?
    }

    private struct State {
        var connected: String??  // nil: not yet; .some(nil): connected; .some(reason): refused
        var online: [String: Bool] = [:]
        var last: [String: RigAnswer] = [:]
        var synced = false
        var subscribed: Set<Int32> = []
        /// The command in flight, its acknowledgements' commitments and its answers, by node.
        var command: String?
        var commits: [String: Set<String>] = [:]
        var answers: [String: [RigAnswer]] = [:]
        /// Answers on a node's topic that name another node.
        var mislabelled: [String] = []
        /// The clock reading in flight: its id, when it was sent (this host's Unix ms), and
        /// each node's clock with when its answer came.
        var clockCommand: String?
        var clockSent = 0.0
        var clocks: [String: (clock: Double, received: Double)] = [:]
    }

    /// A node's clock against this host's, read as NTP does: its time when it answered,
    /// against the middle of the round trip; off by at most half the round trip.
    struct ClockReading: Sendable, Equatable {
        /// Milliseconds the node's clock is ahead of this host's (behind: negative).
        var offset: Double
        /// Half the round trip, in milliseconds: the reading is within this.
        var uncertainty: Double

        init(nodeClock: Double, sent: Double, received: Double) {
            offset = nodeClock - (sent + received) / 2
            uncertainty = (received - sent) / 2
        }
    }

    /// What the nodes said to one command, checked (``RigProtocol``).
    struct Collected: Sendable {
        /// The answer of each known node that acknowledged the command and proved the answer its own.
        var answers: [String: RigAnswer] = [:]
        /// Nodes with two different answers (or acknowledgements) to the command: another
        /// client writes their topics.
        var conflicts: [String: [RigAnswer]] = [:]
        /// What was not counted, and why.
        var ignored: [String] = []
    }

    /// How long `rig capture` still listens once every node has answered, for a node's
    /// acknowledgement that a forger's came before.
    static let settle: Duration = .milliseconds(200)

    let rig: String
    private let syncTopic: String
    private let state = Mutex(State())
    private let changed = DispatchSemaphore(value: 0)
    private let client = Mutex<MQTTClient?>(nil)

    init(broker: BrokerAddress, rig: String, credentials: (user: String, password: String?)?) throws(ShutterError) {
        self.rig = rig
        let clientID = "shutterpipe-rig-\(UUID().uuidString.prefix(8).lowercased())"
        syncTopic = "shutterpipe/\(rig)/client/\(clientID)/sync"
        var handlers = MQTTClient.Handlers()
        handlers.onConnect = { [weak self] refused in self?.update { $0.connected = .some(refused) } }
        handlers.onSubscribed = { [weak self] id in self?.update { _ = $0.subscribed.insert(id) } }
        handlers.onMessage = { [weak self] topic, payload, _ in self?.received(topic, payload) }
        let made = try MQTTClient(broker: broker, clientID: clientID, credentials: credentials, will: nil, keepalive: 10, handlers: handlers)
        client.withLock { $0 = made }
    }

    private var mqtt: MQTTClient { client.withLock { $0! } }

    func close() {
        mqtt.stop()
    }

    /// Connects, or says why not.
    func connect(within limit: Duration) throws(ShutterError) {
        let problem = mqtt.start()
        guard wait(limit, until: { $0.connected != nil }) else {
            let why = [problem, mqtt.lastProblem].compactMap { $0 }.joined(separator: "; ")
            let tls = mqtt.broker.tls ? ", and that --ca names the CA that signed its certificate" : ""
            throw ShutterError(.timeout, "cannot reach the broker \(mqtt.broker)\(why.isEmpty ? "" : ": \(why)")",
                               fix: "check --broker, that the broker runs (systemctl status mosquitto)\(tls)")
        }
        if case .some(.some(let refused)) = state.withLock({ $0.connected }) {
            throw ShutterError(.permissionDenied, "the broker \(mqtt.broker) refused the connection: \(refused)")
        }
    }

    /// The nodes the broker holds presence for, once every retained message has arrived:
    /// a message to this session's own topic, sent after subscribing, comes after them.
    func knownNodes() throws(ShutterError) -> [Node] {
        let presence = mqtt.subscribe("shutterpipe/\(rig)/node/+/online")
        let states = mqtt.subscribe("shutterpipe/\(rig)/node/+/state")
        let acks = mqtt.subscribe("shutterpipe/\(rig)/node/+/ack")
        let sync = mqtt.subscribe(syncTopic)
        guard wait(.seconds(5), until: { [presence, states, acks, sync].allSatisfy($0.subscribed.contains) }) else {
            throw ShutterError(.timeout, "the broker \(mqtt.broker) did not confirm the subscriptions")
        }
        mqtt.publish(syncTopic, Data("sync".utf8))
        guard wait(.seconds(5), until: { $0.synced }) else {
            throw ShutterError(.timeout, "the broker \(mqtt.broker) did not deliver this client's own message")
        }
        return state.withLock { state in
            Set(state.online.keys).union(state.last.keys).sorted().map { Node(name: $0, online: state.online[$0] ?? false, last: state.last[$0]) }
        }
    }

    /// Publishes `command` and waits until every online node of `nodes` has answered it
    /// with a proven answer, or `timeout`. Answers of other nodes are never counted.
    func send(_ command: RigCommandMessage, awaiting nodes: [Node], timeout: Duration) throws(ShutterError) -> Collected {
        update { $0.command = command.id }
        if let problem = mqtt.publish(RigProtocol.commandTopic(rig: rig), command.payload) {
            throw ShutterError(.unexpected, "could not publish the command: \(problem)")
        }
        let known = Set(nodes.map(\.name)), online = nodes.filter(\.online).map(\.name)
        let answered = wait(timeout) { state in
            let collected = Self.collect(state, known: known)
            return online.allSatisfy { collected.answers[$0] != nil || collected.conflicts[$0] != nil }
        }
        // A client that forges a node's acknowledgement and answer may be quicker than the
        // node, but the node acknowledges the moment the command arrives: a moment more
        // lets its acknowledgement come, and the two make a conflict.
        if answered { _ = wait(Self.settle) { _ in false } }
        return state.withLock { Self.collect($0, known: known) }
    }

    /// Reads the clock of every online node of `nodes` (the `clock` command), waiting
    /// until each has answered or `timeout`.
    func readClocks(of nodes: [Node], timeout: Duration) -> [String: ClockReading] {
        let online = nodes.filter(\.online).map(\.name)
        guard !online.isEmpty else { return [:] }
        let id = UUID().uuidString.lowercased(), sent = RigProtocol.unixMilliseconds()
        update { state in
            state.clockCommand = id
            state.clockSent = sent
        }
        let command = RigCommandMessage(id: id, event: RigProtocol.clockEvent, expires: sent + Double(timeout / .milliseconds(1)))
        guard mqtt.publish(RigProtocol.commandTopic(rig: rig), command.payload) == nil else { return [:] }
        _ = wait(timeout) { state in online.allSatisfy { state.clocks[$0] != nil } }
        return state.withLock { state in
            state.clocks.filter { online.contains($0.key) }.mapValues { ClockReading(nodeClock: $0.clock, sent: state.clockSent, received: $0.received) }
        }
    }

    /// Checks what came for the command in flight.
    private static func collect(_ state: State, known: Set<String>) -> Collected {
        var collected = Collected()
        collected.ignored = state.mislabelled
        for node in Set(state.answers.keys).union(state.commits.keys).sorted() {
            guard known.contains(node) else {
                collected.ignored.append("node '\(node)' answered but never announced itself on this rig: not counted")
                continue
            }
            let answers = state.answers[node] ?? [], commits = state.commits[node] ?? []
            var distinct: [RigAnswer] = []
            for answer in answers where !distinct.contains(where: { $0.substance == answer.substance }) { distinct.append(answer) }
            if distinct.count > 1 || commits.count > 1 {
                collected.conflicts[node] = distinct
                continue
            }
            let proven = answers.first { answer in answer.proof.map { commits.contains(RigProtocol.commitment(to: $0)) } == true }
            if let proven { collected.answers[node] = proven }
            for answer in answers where answer.proof.map({ commits.contains(RigProtocol.commitment(to: $0)) }) != true {
                collected.ignored.append("an answer on node '\(node)'\'s topic without the proof its acknowledgement committed to (\(answer.state ?? answer.error ?? "?")): not counted")
            }
        }
        return collected
    }

    private func received(_ topic: String, _ payload: Data) {
        if topic == syncTopic { update { $0.synced = true }; return }
        if let node = RigProtocol.node(in: topic, rig: rig, leaf: "online") {
            let text = String(decoding: payload, as: UTF8.self).trimmingCharacters(in: .whitespaces)
            update { $0.online[node] = text == "true" }
        } else if let node = RigProtocol.node(in: topic, rig: rig, leaf: "state"), let answer = RigAnswer(payload, node: node) {
            update { state in
                // Only the node named by the topic answers for it.
                guard answer.named == node else {
                    state.mislabelled.append("an answer on node '\(node)'\'s topic names node '\(answer.named ?? "")': not counted")
                    return
                }
                state.last[node] = answer
                if let command = state.command, answer.id == command { state.answers[node, default: []].append(answer) }
            }
        } else if let node = RigProtocol.node(in: topic, rig: rig, leaf: "ack"),
                  let object = (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any],
                  object["node"] as? String == node, let id = object["id"] as? String {
            let received = RigProtocol.unixMilliseconds()
            if let commit = object["commit"] as? String {
                update { state in if id == state.command { state.commits[node, default: []].insert(commit) } }
            } else if let clock = (object["clock"] as? NSNumber)?.doubleValue {
                update { state in if id == state.clockCommand, state.clocks[node] == nil { state.clocks[node] = (clock, received) } }
            }
        }
    }

    private func update(_ body: (inout State) -> Void) {
        state.withLock { body(&$0) }
        changed.signal()
    }

    /// Waits until `condition` holds, at most `limit`; whether it does.
    private func wait(_ limit: Duration, until condition: (State) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + limit
        while !state.withLock({ condition($0) }) {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            _ = changed.wait(timeout: .now() + .milliseconds(Int(min(left, .milliseconds(100)) / .milliseconds(1)) + 1))
        }
        return true
    }
}
