#if canImport(Glibc)
import Glibc
#endif
import CMosquitto
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// One connection to an MQTT broker, on libmosquitto. Its network loop, reconnects and
/// callbacks run on libmosquitto's own thread (`mosquitto_loop_start`), never on the
/// cooperative pool; the handlers given here are called on that thread and must return
/// quickly. Publishing is safe from any thread.
///
/// After a lost connection libmosquitto reconnects by itself with exponential backoff
/// (1 s doubling to 30 s); every (re)connect calls `onConnect` again, where the owner
/// subscribes and announces itself afresh.
final class MQTTClient: @unchecked Sendable {  // `handle`: libmosquitto is thread-safe once its loop thread runs (mosquitto_threaded_set)
    struct Handlers: Sendable {
        /// Connected (`nil`), or refused by the broker (its reason).
        var onConnect: @Sendable (_ refused: String?) -> Void = { _ in }
        /// The connection ended: `unexpected` unless this side disconnected.
        var onDisconnect: @Sendable (_ unexpected: Bool, _ reason: String) -> Void = { _, _ in }
        var onMessage: @Sendable (_ topic: String, _ payload: Data, _ retained: Bool) -> Void = { _, _, _ in }
        var onSubscribed: @Sendable (_ messageID: Int32) -> Void = { _ in }
        init() {}
    }

    /// A last will: published by the broker when this client vanishes without disconnecting.
    struct Will: Sendable {
        var topic: String
        var payload: String
        var retain: Bool
    }

    /// The largest packet the broker may send this client (a command is at most 4 KB, an
    /// answer a few hundred bytes): larger ones are dropped by the broker, never buffered here.
    static let maximumPacketBytes = 8192

    let broker: BrokerAddress
    private let handle: OpaquePointer
    private let box: Unmanaged<HandlerBox>

    /// Configures a client; nothing connects until ``start()``.
    init(broker: BrokerAddress, clientID: String, credentials: (user: String, password: String?)?, will: Will?,
         keepalive: Int, handlers: Handlers) throws(ShutterError) {
        _ = Self.libraryStarted
        self.broker = broker
        let box = Unmanaged.passRetained(HandlerBox(handlers))
        guard let handle = mosquitto_new(clientID, true, box.toOpaque()) else {
            box.release()
            throw ShutterError(.unexpected, "mqtt: libmosquitto could not create a client")
        }
        self.handle = handle
        self.box = box
        keepaliveSeconds = Int32(keepalive)
        // MQTT 5: the CONNECT can say how large a packet this client takes, and the broker
        // drops what is larger instead of sending it (MQTT 3.1.1 has no such limit: a 64 MB
        // publish was read whole into memory before its size could be checked).
        mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, Int32(MQTT_PROTOCOL_V5))
        var properties: OpaquePointer?
        mosquitto_property_add_int32(&properties, 39 /* MQTT_PROP_MAXIMUM_PACKET_SIZE (mqtt_protocol.h) */, UInt32(Self.maximumPacketBytes))
        // libmosquitto keeps CONNECT properties for the async connect and every reconnect,
        // but only its blocking connect takes them: given an invalid port, that call stores
        // them and returns before it connects anywhere.
        _ = mosquitto_connect_bind_v5(handle, "", -1, 0, nil, properties)
        mosquitto_property_free_all(&properties)
        // Small messages go out at once: with Nagle's algorithm an answer can wait for the
        // peer's delayed ACK (40 ms on Linux).
        mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1)
        mosquitto_reconnect_delay_set(handle, 1, 30, true)
        do throws(ShutterError) {
            if let credentials {
                try check(mosquitto_username_pw_set(handle, credentials.user, credentials.password), "setting the user name")
            }
            if broker.tls {
                let rc = mosquitto_tls_set(handle, broker.caFile, broker.caFile == nil ? "/etc/ssl/certs" : nil, nil, nil, nil)
                if rc != MOSQ_ERR_SUCCESS.rawValue {
                    throw ShutterError(.unexpected, "mqtt: TLS could not be set up with CA file '\(broker.caFile ?? "/etc/ssl/certs")': \(Self.describe(rc))",
                                       fix: "give the PEM file of the CA that signed the broker's certificate as 'ca'")
                }
            }
            if let will {
                try check(mosquitto_will_set(handle, will.topic, Int32(will.payload.utf8.count), will.payload, 1, will.retain), "setting the last will")
            }
        } catch {
            mosquitto_destroy(handle)
            box.release()
            throw error
        }
        mosquitto_connect_callback_set(handle) { _, context, rc in
            HandlerBox.from(context).handlers.onConnect(rc == 0 ? nil : MQTTClient.refusal(rc))
        }
        mosquitto_disconnect_callback_set(handle) { _, context, rc in
            HandlerBox.from(context).handlers.onDisconnect(rc != 0, MQTTClient.describe(rc))
        }
        mosquitto_message_callback_set(handle) { _, context, message in
            guard let message = message?.pointee, let topic = message.topic else { return }
            let payload = message.payload.map { Data(bytes: $0, count: Int(message.payloadlen)) } ?? Data()
            HandlerBox.from(context).handlers.onMessage(String(cString: topic), payload, message.retain)
        }
        mosquitto_log_callback_set(handle) { _, context, level, message in
            guard level & (MOSQ_LOG_ERR | MOSQ_LOG_WARNING) != 0, let message else { return }
            HandlerBox.from(context).lastProblem.withLock { $0 = String(cString: message) }
        }
        mosquitto_subscribe_callback_set(handle) { _, context, messageID, _, _ in
            HandlerBox.from(context).handlers.onSubscribed(messageID)
        }
        mosquitto_publish_callback_set(handle) { _, context, messageID in
            HandlerBox.from(context).unacknowledged.withLock { $0.acknowledged(messageID) }
        }
    }

    private let keepaliveSeconds: Int32

    deinit {
        mosquitto_destroy(handle)
        box.release()
    }

    /// Starts connecting, and the loop thread that keeps the connection. A broker that
    /// cannot be reached now is retried by that thread; the error is returned so that the
    /// owner can say so.
    @discardableResult
    func start() -> String? {
        let rc = mosquitto_connect_async(handle, broker.host, Int32(broker.port), keepaliveSeconds)
        mosquitto_loop_start(handle)
        return rc == MOSQ_ERR_SUCCESS.rawValue ? nil : Self.describe(rc)
    }

    /// libmosquitto's last error or warning ("OpenSSL Error[0]: … certificate verify
    /// failed"), which says why a connection failed where the return codes do not.
    var lastProblem: String? { box.takeUnretainedValue().lastProblem.withLock { $0 } }

    /// Waits until the broker acknowledged every message published so far, at most
    /// `limit` (a broker that is gone acknowledges nothing): the last answers of a node
    /// that stops reach the rig before it disconnects.
    func flush(within limit: Duration) async {
        let deadline = ContinuousClock.now + limit
        while !box.takeUnretainedValue().unacknowledged.withLock({ $0.isEmpty }) && ContinuousClock.now < deadline {
            await pauseIgnoringCancellation(for: .milliseconds(5))  // a stop's flush: cancelled or not
        }
    }

    /// Disconnects cleanly (no last will) and stops the loop thread.
    func stop() {
        mosquitto_disconnect(handle)
        mosquitto_loop_stop(handle, false)
    }

    /// Subscribes at QoS 1; returns the message id its acknowledgement will carry.
    @discardableResult
    func subscribe(_ pattern: String) -> Int32 {
        var messageID: Int32 = 0
        mosquitto_subscribe(handle, &messageID, pattern, 1)
        return messageID
    }

    /// Publishes at QoS 1. Fails only when libmosquitto cannot queue it (while
    /// disconnected, QoS 1 messages are queued and sent on reconnect).
    @discardableResult
    func publish(_ topic: String, _ payload: Data, retain: Bool = false) -> String? {
        var messageID: Int32 = 0
        let rc = payload.withUnsafeBytes { raw in
            mosquitto_publish(handle, &messageID, topic, Int32(raw.count), raw.baseAddress, 1, retain)
        }
        guard rc == MOSQ_ERR_SUCCESS.rawValue else { return Self.describe(rc) }
        box.takeUnretainedValue().unacknowledged.withLock { $0.published(messageID) }
        return nil
    }

    private func check(_ rc: Int32, _ what: String) throws(ShutterError) {
        guard rc != MOSQ_ERR_SUCCESS.rawValue else { return }
        throw ShutterError(.unexpected, "mqtt: \(what) failed: \(Self.describe(rc))")
    }

    static func describe(_ rc: Int32) -> String {
        if rc == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
        return String(cString: mosquitto_strerror(rc))
    }

    /// A CONNACK refusal, with what to do about it.
    static func refusal(_ rc: Int32) -> String {
        // MQTT 3.1.1 return codes are below 128; MQTT 5 reason codes from 128.
        let reason = String(cString: rc >= 128 ? mosquitto_reason_string(rc) : mosquitto_connack_string(rc))
        switch rc {
        case 4, 5, 134, 135: return "\(reason): check 'username' and 'password' (the broker's password file or its ACL)"
        default: return reason
        }
    }

    private static let libraryStarted: Void = { mosquitto_lib_init(); return () }()
}

/// The handlers, reached from libmosquitto's `void *obj`.
private final class HandlerBox: Sendable {
    let handlers: MQTTClient.Handlers
    let lastProblem = Mutex<String?>(nil)
    let unacknowledged = Mutex(Unacknowledged())
    init(_ handlers: MQTTClient.Handlers) { self.handlers = handlers }
    static func from(_ context: UnsafeMutableRawPointer?) -> HandlerBox {
        Unmanaged<HandlerBox>.fromOpaque(context!).takeUnretainedValue()
    }
}

/// The QoS 1 messages the broker has not acknowledged yet. The acknowledgement comes on
/// the loop thread and may come before `mosquitto_publish` returned its id here.
private struct Unacknowledged {
    private var waiting: Set<Int32> = []
    private var early: Set<Int32> = []
    var isEmpty: Bool { waiting.isEmpty }
    mutating func published(_ id: Int32) {
        if early.remove(id) == nil { waiting.insert(id) }
    }
    mutating func acknowledged(_ id: Int32) {
        if waiting.remove(id) == nil { early.insert(id) }
    }
}

/// `mqtt://host:port` or `mqtts://host:port` (default ports 1883 and 8883).
struct BrokerAddress: Sendable, Equatable, CustomStringConvertible {
    var host: String
    var port: Int
    var tls: Bool
    var caFile: String?

    init(host: String, port: Int, tls: Bool, caFile: String? = nil) {
        self.host = host
        self.port = port
        self.tls = tls
        self.caFile = caFile
    }

    /// Parses a URL; the message says what is wrong.
    init(parsing url: String, caFile: String? = nil) throws(ShutterError) {
        let tls: Bool
        let rest: Substring
        if url.hasPrefix("mqtt://") { tls = false; rest = url.dropFirst(7) }
        else if url.hasPrefix("mqtts://") { tls = true; rest = url.dropFirst(8) }
        else { throw ShutterError(.unexpected, "broker '\(url)' must start with mqtt:// or mqtts://", fix: "for example mqtt://127.0.0.1:1883") }
        let authority = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        var host = authority
        var port = tls ? 8883 : 1883
        if authority.hasPrefix("[") {  // [::1]:1883
            guard let close = authority.firstIndex(of: "]") else { throw ShutterError(.unexpected, "broker '\(url)': '[' without ']'") }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let tail = authority[authority.index(after: close)...]
            if tail.hasPrefix(":") {
                guard let number = Int(tail.dropFirst()), (1...65535).contains(number) else { throw ShutterError(.unexpected, "broker '\(url)': bad port") }
                port = number
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            guard let number = Int(authority[authority.index(after: colon)...]), (1...65535).contains(number) else {
                throw ShutterError(.unexpected, "broker '\(url)': the port must be a number from 1 to 65535")
            }
            port = number
        }
        guard !host.isEmpty else { throw ShutterError(.unexpected, "broker '\(url)' names no host", fix: "for example mqtt://127.0.0.1:1883") }
        self.init(host: host, port: port, tls: tls, caFile: caFile)
    }

    var description: String { "\(tls ? "mqtts" : "mqtt")://\(host.contains(":") ? "[\(host)]" : host):\(port)" }
}
