import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// A node of a rig: takes commands from an MQTT broker, answers each on its state topic,
/// and announces itself online (retained, with a retained last will of `false`).
///
/// - Commands are de-duplicated by `id`: a redelivered command takes no second photo.
/// - A capture with `at` goes to the coordinator at once, with its moment: the backend
///   waits for it on the thread that fires (``CaptureBackend/capture(at:)``). One that
///   arrives after `at` plus `lateAfter`, or after `expires`, takes no photo and is
///   answered `photoFailed` (`timeout`): a photo at the wrong moment is worse than none.
/// - A command it cannot take (malformed, too large, an unknown event) is answered with
///   an `error`, and the session goes on.
/// - A lost broker is retried with backoff by libmosquitto's thread; the outage and the
///   recovery are logged.
public final class MQTTTrigger: TriggerSource {
    /// The type name in configs.
    public static let typeName = "mqtt"

    /// Registers the `mqtt` type and the `rig` command.
    public static func register(in registry: PluginRegistry) throws {
        try registry.registerTrigger(typeName, summary: "a node of a rig: commands from an MQTT broker, answers and presence back to it") { options, environment in
            MQTTTrigger(options: try MQTTOptions(options), log: environment.log)
        }
        try registry.registerCommand(RigCommand.self)
    }

    /// Ids remembered for de-duplication.
    static let rememberedIDs = 4096
    /// The furthest ahead an `at` may be, in seconds: the node takes no other event while
    /// it waits for one.
    static let longestLead = 60.0

    private struct Pending: Sendable {
        var id: String
        var event: String
    }

    private struct State: Sendable {
        var client: MQTTClient?
        var events: EventChannel?
        var seen: Set<String> = []
        var seenOrder: [String] = []
        var pending: [UInt64: Pending] = [:]
        var nextToken: UInt64 = 1
        var address = BrokerAddress(host: "", port: 0, tls: false)  // set by run, before any callback
        var lostAt: ContinuousClock.Instant?
        var connectedOnce = false
    }

    let options: MQTTOptions
    private let log: Logger
    private let state = Mutex(State())

    /// Creates a trigger; nothing connects until ``run(delivering:)``.
    public init(options: MQTTOptions, log: Logger = .discarding) {
        self.options = options
        self.log = log
    }

    private var commandTopic: String { RigProtocol.commandTopic(rig: options.rig) }
    private var stateTopic: String { RigProtocol.stateTopic(rig: options.rig, node: options.node) }
    private var onlineTopic: String { RigProtocol.onlineTopic(rig: options.rig, node: options.node) }

    /// Connects, and takes commands until cancelled; then says offline and disconnects.
    public func run(delivering events: EventChannel) async throws {
        var handlers = MQTTClient.Handlers()
        handlers.onConnect = { [weak self] refused in self?.connected(refused: refused) }
        handlers.onDisconnect = { [weak self] unexpected, reason in self?.disconnected(unexpected: unexpected, reason: reason) }
        handlers.onMessage = { [weak self] topic, payload, _ in self?.received(topic: topic, payload: payload) }
        let credentials = options.username.map { (user: $0, password: options.password) }
        let address = try options.address()
        state.withLock { $0.address = address }
        let client = try MQTTClient(broker: address, clientID: "shutterpipe-\(options.rig)-\(options.node)-\(getpid())",
                                    credentials: credentials, will: .init(topic: onlineTopic, payload: "false", retain: true),
                                    keepalive: Int(options.keepalive.components.seconds), handlers: handlers)
        state.withLock { state in
            state.client = client
            state.events = events
        }
        if !WallClock.realTimeAllowed {
            log.info("captures with 'at' wait at normal priority: allow this user real-time priority 1 for a tighter rig (docs/rigs.md, \"Firing together\")")
        }
        if let problem = client.start() {
            state.withLock { $0.lostAt = .now }
            log.warning("cannot reach the broker \(address): \(problem); retrying with backoff (1 s, doubling to 30 s)",
                        [("broker", "\(address)")])
        }
        await withTaskCancellationHandler {
            for await _ in AsyncStream<Void>(unfolding: { try? await Task.sleep(for: .seconds(3600)); return Task.isCancelled ? nil : () }) {}
        } onCancel: {}
        // Offline on purpose: a clean disconnect sends no will, so say it here.
        client.publish(onlineTopic, Data("false".utf8), retain: true)
        try? await Task.sleep(for: .milliseconds(100))
        client.stop()
        state.withLock { $0.client = nil; $0.events = nil }
    }

    /// Publishes the answer to a command with its id.
    public func sync(_ answer: ShutterAnswer) async {
        guard let command = state.withLock({ $0.pending.removeValue(forKey: answer.request.token) }) else { return }
        var object: [String: Any] = ["id": command.id, "node": options.node, "event": command.event, "state": answer.state.rawValue,
                                     "paths": answer.stored.map(\.location)]
        if let failure = answer.failure {
            object["cause"] = failure.cause.rawValue
            object["message"] = failure.message
            if let fix = failure.fix { object["fix"] = fix }
        }
        if let time = answer.captureTime { object["capturedAt"] = RigProtocol.unixMilliseconds(time) }
        publishState(object)
        options.feedback.run(for: answer.state, log: log)
    }

    private func connected(refused: String?) {
        guard let (client, address) = state.withLock({ state in state.client.map { ($0, state.address) } }) else { return }
        if let refused {
            log.error("the broker \(address) refused this node: \(refused); retrying with backoff")
            return
        }
        client.subscribe(commandTopic)
        client.publish(onlineTopic, Data("true".utf8), retain: true)
        let (lostAt, first) = state.withLock { state -> (ContinuousClock.Instant?, Bool) in
            defer { state.lostAt = nil; state.connectedOnce = true }
            return (state.lostAt, !state.connectedOnce)
        }
        if let lostAt {
            let seconds = Double((ContinuousClock.now - lostAt) / .milliseconds(1)) / 1000
            log.info("\(first ? "connected" : "reconnected") to the broker \(address) after \(String(format: "%.1f", seconds)) s without it; node '\(options.node)' of rig '\(options.rig)' online")
        } else {
            log.info("connected to the broker \(address): node '\(options.node)' of rig '\(options.rig)' online, commands on \(commandTopic)")
        }
    }

    private func disconnected(unexpected: Bool, reason: String) {
        guard unexpected else { return }
        let (first, address) = state.withLock { state -> (Bool, BrokerAddress) in
            defer { if state.lostAt == nil { state.lostAt = .now } }
            return (state.lostAt == nil, state.address)
        }
        if first { log.warning("lost the broker \(address): \(reason); reconnecting with backoff (1 s, doubling to 30 s)") }
        if let client = state.withLock({ $0.client }), let problem = client.lastProblem { log.debug("libmosquitto: \(problem)") }
    }

    private func received(topic: String, payload: Data) {
        guard topic == commandTopic else { return }
        let command: RigCommandMessage
        do {
            command = try RigCommandMessage(parsing: payload)
        } catch {
            switch error {
            case .tooLarge(let size):
                refuse(nil, "a command of \(size) bytes is too large (at most \(RigProtocol.maximumCommandBytes)); nothing was done")
            case .malformed(let why, let id):
                refuse(id, "malformed command: \(why)")
            }
            return
        }
        let duplicate = state.withLock { state -> Bool in
            guard state.seen.insert(command.id).inserted else { return true }
            state.seenOrder.append(command.id)
            if state.seenOrder.count > Self.rememberedIDs { state.seen.remove(state.seenOrder.removeFirst()) }
            return false
        }
        if duplicate {
            log.info("command '\(command.id)' arrived again (redelivered or sent twice); it was already taken, so it takes no second photo")
            return
        }
        guard let event = options.map.event(for: command.event) else {
            let known = options.map.events.keys.sorted().joined(separator: ", ")
            refuse(command.id, "unknown event '\(command.event)'; this node takes \(known)")
            return
        }
        let now = RigProtocol.unixMilliseconds()
        let tolerance = Double(options.lateAfter / .milliseconds(1))
        var late: String?
        if let expires = command.expires, now > expires {
            late = "it came \(String(format: "%.0f", now - expires)) ms after it expired"
        } else if let at = command.at, now > at + tolerance {
            late = "it came \(String(format: "%.0f", now - at)) ms after its time (at most \(String(format: "%.0f", tolerance)) ms late is fired, 'lateAfter')"
        }
        if let at = command.at, at > now + Self.longestLead * 1000 {
            refuse(command.id, "'at' is \(String(format: "%.0f", (at - now) / 1000)) s ahead; at most \(Int(Self.longestLead)) s: the node would wait that long before anything else (check the sender's clock)")
            return
        }
        if let late {
            log.warning("command '\(command.id)' (\(command.event)) took no photo: \(late)")
            var object: [String: Any] = ["id": command.id, "node": options.node, "event": command.event, "paths": [String](),
                                         "cause": FailureCause.timeout.rawValue,
                                         "message": "the command came late: \(late); a photo at the wrong moment is worse than none",
                                         "fix": "send commands earlier (a later 'at'), or check this node's clock and network (docs/rigs.md)"]
            object["state"] = event == .capture ? ShutterState.photoFailed.rawValue : ShutterState.exitedOrUnableToEnter.rawValue
            publishState(object)
            return
        }
        // At once, with its moment: the backend waits for it on the thread that fires.
        let (events, token) = state.withLock { state -> (EventChannel?, UInt64) in
            let token = state.nextToken
            state.nextToken += 1
            state.pending[token] = Pending(id: command.id, event: command.event)
            return (state.events, token)
        }
        let fireAt = command.at.flatMap { $0 > now ? Date(timeIntervalSince1970: $0 / 1000) : nil }
        events?.send(TriggerEvent(event, origin: "mqtt \(command.id)", token: token, fireAt: event == .capture ? fireAt : nil))
    }

    private func refuse(_ id: String?, _ message: String) {
        log.warning("\(commandTopic): \(message)")
        publishState(["id": id.map { $0 as Any } ?? NSNull(), "node": options.node, "error": message])
    }

    private func publishState(_ object: [String: Any]) {
        guard let client = state.withLock({ $0.client }) else { return }
        if let problem = client.publish(stateTopic, RigProtocol.encode(object), retain: true) {
            log.warning("could not publish to \(stateTopic): \(problem)")
        }
    }
}
