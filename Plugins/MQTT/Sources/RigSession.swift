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

    init?(_ payload: Data, node: String) {
        guard let object = (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any] else { return nil }
        id = object["id"] as? String
        self.node = node
        event = object["event"] as? String
        state = object["state"] as? String
        error = object["error"] as? String
        cause = object["cause"] as? String
        message = object["message"] as? String
        paths = object["paths"] as? [String] ?? []
        capturedAt = (object["capturedAt"] as? NSNumber)?.doubleValue
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
    }

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
        let sync = mqtt.subscribe(syncTopic)
        guard wait(.seconds(5), until: { [presence, states, sync].allSatisfy($0.subscribed.contains) }) else {
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

    /// Publishes `command` and waits until every online node of `nodes` (and any other
    /// that answers) has answered it, or `timeout`. The answers by node.
    func send(_ command: RigCommandMessage, awaiting nodes: [Node], timeout: Duration) throws(ShutterError) -> [String: RigAnswer] {
        if let problem = mqtt.publish(RigProtocol.commandTopic(rig: rig), command.payload) {
            throw ShutterError(.unexpected, "could not publish the command: \(problem)")
        }
        let online = nodes.filter(\.online).map(\.name)
        _ = wait(timeout) { state in online.allSatisfy { state.last[$0]?.id == command.id } }
        return state.withLock { state in state.last.filter { $0.value.id == command.id } }
    }

    private func received(_ topic: String, _ payload: Data) {
        if topic == syncTopic { update { $0.synced = true }; return }
        if let node = RigProtocol.node(in: topic, rig: rig, leaf: "online") {
            let text = String(decoding: payload, as: UTF8.self).trimmingCharacters(in: .whitespaces)
            update { $0.online[node] = text == "true" }
        } else if let node = RigProtocol.node(in: topic, rig: rig, leaf: "state"), let answer = RigAnswer(payload, node: node) {
            update { $0.last[node] = answer }
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
