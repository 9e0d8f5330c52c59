import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// A node of a rig: takes commands from an MQTT broker, answers each on its state topic,
/// and announces itself online (retained, with a retained last will of `false`).
///
/// - Commands are de-duplicated by `id`: a redelivered command takes no second photo.
/// - Each command taken is acknowledged on the node's `ack` topic with the SHA-256 of a
///   secret that its answer reveals as `proof` (``RigProtocol``): `rig capture` counts no
///   answer another client wrote on this node's topics.
/// - A command the broker delivers as retained (kept from before this node connected) is
///   answered `stale` and takes no photo: a command fires when it is sent, or never.
/// - A capture with `at` waits here, and goes to the coordinator half a second before its
///   moment: the backend waits the rest on the thread that fires
///   (``CaptureBackend/capture(at:)``), and the node's other triggers are served
///   meanwhile. One that arrives after `at` plus `lateAfter`, or after `expires`, takes
///   no photo and is answered `photoFailed` (`timeout`): a photo at the wrong moment is
///   worse than none.
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
    /// The furthest ahead an `at` may be, in seconds.
    static let longestLead = 60.0
    /// How long before its `at` a capture goes to the coordinator (which then holds the
    /// camera for it): shorter than this, other triggers never wait.
    static let handOverLead = 0.5

    /// A command that was handed over: what its answer is published with.
    private struct Command: Sendable {
        var id: String
        var event: String
        /// Revealed in the answer; its SHA-256 went out in the acknowledgement.
        var secret: String
    }

    private struct State: Sendable {
        var client: MQTTClient?
        var events: EventChannel?
        var seen: Set<String> = []
        var seenOrder: [String] = []
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
        handlers.onMessage = { [weak self] topic, payload, retained in self?.received(topic: topic, payload: payload, retained: retained) }
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
        // The last answers and this go out before the disconnect (acknowledged by the broker).
        client.publish(onlineTopic, Data("false".utf8), retain: true)
        await client.flush(within: .seconds(2))
        client.stop()
        state.withLock { $0.client = nil; $0.events = nil }
    }

    /// Publishes the answer to a command with its id.
    private func publish(_ answer: ShutterAnswer, to command: Command) {
        var object: [String: Any] = ["id": command.id, "node": options.node, "event": command.event, "state": answer.state.rawValue,
                                     "paths": answer.stored.map(\.location), "proof": command.secret]
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

    private func received(topic: String, payload: Data, retained: Bool) {
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
        if command.event == RigProtocol.clockEvent {
            // `rig status` reading this node's clock: answered at once, on the ack topic.
            tellClock(command.id)
            return
        }
        let secret = RigProtocol.newSecret()
        acknowledge(command.id, secret: secret)
        if retained {
            log.warning("command '\(command.id)' (\(command.event)) was retained by the broker, from before this node connected: answered stale, no photo")
            publishState(["id": command.id, "node": options.node, "event": command.event, "state": "stale", "paths": [String](), "proof": secret,
                          "message": "a retained command is old news: it would fire at every start of every node",
                          "fix": "publish commands without the retain flag (rig capture does); clear this one with mosquitto_pub -r -n -t \(commandTopic)"])
            return
        }
        if command.event == RigProtocol.labelEvent {
            return setLabel(command, proof: secret)
        }
        if command.event == RigProtocol.sequenceEvent {
            if let expires = command.expires, RigProtocol.unixMilliseconds() > expires {
                refuse(command.id, "the sequence command came after it expired; no sequence was started", proof: secret)
                return
            }
            return runSequence(command, proof: secret)
        }
        guard let event = options.map.event(for: command.event) else {
            let known = options.map.events.keys.sorted().joined(separator: ", ")
            refuse(command.id, "unknown event '\(command.event)'; this node takes \(known)", proof: secret)
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
            refuse(command.id, "'at' is \(String(format: "%.0f", (at - now) / 1000)) s ahead; at most \(Int(Self.longestLead)) s (check the sender's clock)", proof: secret)
            return
        }
        if let late {
            log.warning("command '\(command.id)' (\(command.event)) took no photo: \(late)")
            var object: [String: Any] = ["id": command.id, "node": options.node, "event": command.event, "paths": [String](),
                                         "cause": FailureCause.timeout.rawValue, "proof": secret,
                                         "message": "the command came late: \(late); a photo at the wrong moment is worse than none",
                                         "fix": "send commands earlier (a later 'at'), or check this node's clock and network (docs/rigs.md)"]
            object["state"] = event == .capture ? ShutterState.photoFailed.rawValue : ShutterState.exitedOrUnableToEnter.rawValue
            publishState(object)
            return
        }
        let handed = Command(id: command.id, event: command.event, secret: secret)
        let fireAt = event == .capture ? command.at.flatMap { $0 > now ? Date(timeIntervalSince1970: $0 / 1000) : nil } : nil
        let trigger = TriggerEvent(event, origin: "mqtt \(command.id)", fireAt: fireAt)
        // Half a second before its moment, with it: the backend waits the rest on the
        // thread that fires. Until then the coordinator serves the other triggers.
        let wait = (fireAt?.timeIntervalSinceNow ?? 0) - Self.handOverLead
        guard wait > 0 else { return handOver(trigger, handed) }
        log.info("command '\(command.id)' (\(command.event)) fires in \(String(format: "%.1f", wait + Self.handOverLead)) s; it goes to the camera \(Self.handOverLead) s before, other triggers go on meanwhile")
        Task { [weak self] in
            try? await Task.sleep(for: .seconds(wait))
            self?.handOver(trigger, handed)
        }
    }

    /// The coordinator's channel while the trigger runs.
    var eventChannel: EventChannel? { state.withLock { $0.events } }

    /// Gives an event to the coordinator, unless the trigger has stopped meanwhile.
    private func handOver(_ event: TriggerEvent, _ command: Command) {
        state.withLock { $0.events }?.submit(event).observe { [self] answer in publish(answer, to: command) }
    }

    private func acknowledge(_ id: String, secret: String) {
        guard let client = state.withLock({ $0.client }) else { return }
        let topic = RigProtocol.ackTopic(rig: options.rig, node: options.node)
        let object: [String: Any] = ["id": id, "node": options.node, "commit": RigProtocol.commitment(to: secret)]
        if let problem = client.publish(topic, RigProtocol.encode(object)) { log.warning("could not publish to \(topic): \(problem)") }
    }

    private func tellClock(_ id: String) {
        guard let client = state.withLock({ $0.client }) else { return }
        let topic = RigProtocol.ackTopic(rig: options.rig, node: options.node)
        let object: [String: Any] = ["id": id, "node": options.node, "clock": RigProtocol.unixMilliseconds()]
        if let problem = client.publish(topic, RigProtocol.encode(object)) { log.warning("could not publish to \(topic): \(problem)") }
    }

    func refuse(_ id: String?, _ message: String, proof: String? = nil) {
        log.warning("\(commandTopic): \(message)")
        var object: [String: Any] = ["id": id.map { $0 as Any } ?? NSNull(), "node": options.node, "error": message]
        if let proof { object["proof"] = proof }
        publishState(object)
    }

    func publishState(_ object: [String: Any]) {
        guard let client = state.withLock({ $0.client }) else { return }
        if let problem = client.publish(stateTopic, RigProtocol.encode(object), retain: true) {
            log.warning("could not publish to \(stateTopic): \(problem)")
        }
    }
}
