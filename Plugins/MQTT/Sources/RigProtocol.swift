import CCrypto
import Foundation
import ShutterPipeKit

/// The topics and messages of a rig; docs/rigs.md is their reference for other MQTT
/// clients (Node-RED, Home Assistant, mosquitto_pub).
///
/// | topic | retained | payload |
/// |---|---|---|
/// | `shutterpipe/RIG/command` | no | `{"id", "event", "at"?, "expires"?}` |
/// | `shutterpipe/RIG/node/NODE/ack` | no | `{"id", "node", "commit"}`: the node took the command; `commit` is the SHA-256 of a secret its answer reveals |
/// | `shutterpipe/RIG/node/NODE/state` | yes | the answer: `{"id", "node", "event", "state", "cause"?, "message"?, "paths", "capturedAt"?, "proof"}`, or `{"id", "node", "error", "proof"?}` for a command it could not take |
/// | `shutterpipe/RIG/node/NODE/online` | yes | `true`, or `false` (also the node's last will) |
///
/// An answer counts only on the topic of the node it names, for a command that node
/// acknowledged, with the proof whose SHA-256 its acknowledgement committed to: another
/// client that can write a node's topics (a broker without the ACL of docs/rigs.md) can
/// make `rig capture` see a conflict, never a success that did not happen.
enum RigProtocol {
    /// The largest command a node reads; anything longer is answered as too large.
    static let maximumCommandBytes = 4096

    static func commandTopic(rig: String) -> String { "shutterpipe/\(rig)/command" }
    static func stateTopic(rig: String, node: String) -> String { "shutterpipe/\(rig)/node/\(node)/state" }
    static func onlineTopic(rig: String, node: String) -> String { "shutterpipe/\(rig)/node/\(node)/online" }
    static func ackTopic(rig: String, node: String) -> String { "shutterpipe/\(rig)/node/\(node)/ack" }

    /// The command `rig status` sends to read every node's clock: each answers at once on
    /// its ack topic with `{"id", "node", "clock"}` (its Unix time in ms), takes nothing.
    static let clockEvent = "clock"
    /// The command that sets the session label on every node (`label`: the text).
    static let labelEvent = "label"
    /// The command that runs a sequence the nodes' configs plan (`sequence`: its name) on
    /// every node; each answers once, when its sequence has ended.
    static let sequenceEvent = "sequence"

    /// A fresh secret for one command's answer (32 hex digits).
    static func newSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// The SHA-256 of `secret`, in hex: what an acknowledgement commits to.
    static func commitment(to secret: String) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let bytes = Array(secret.utf8)
        _ = EVP_Digest(bytes, bytes.count, &digest, &length, EVP_sha256(), nil)
        return digest.prefix(Int(length)).map { String(format: "%02x", $0) }.joined()
    }

    /// The node a `.../node/NODE/<leaf>` topic names, for that leaf.
    static func node(in topic: String, rig: String, leaf: String) -> String? {
        let prefix = "shutterpipe/\(rig)/node/", suffix = "/\(leaf)"
        guard topic.hasPrefix(prefix), topic.hasSuffix(suffix), topic.count > prefix.count + suffix.count else { return nil }
        return String(topic.dropFirst(prefix.count).dropLast(suffix.count))
    }

    /// Whether a rig or node name can be a topic level: no wildcards, separators or NUL.
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 128 && !name.contains { "/+#\u{0}".contains($0) }
    }

    /// Unix time in milliseconds, fractional.
    static func unixMilliseconds(_ date: Date = Date()) -> Double { date.timeIntervalSince1970 * 1000 }

    static func encode(_ object: [String: Any]) -> Data {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
    }
}

/// A command as a node reads it.
struct RigCommandMessage: Sendable, Equatable {
    var id: String
    var event: String
    /// Unix ms at which to fire.
    var at: Double?
    /// Unix ms after which it must not fire.
    var expires: Double?
    /// For a `label` command: the label ("" clears it).
    var label: String?
    /// For a `sequence` command: the name of the sequence, as the nodes' configs plan it.
    var sequence: String?

    enum Problem: Error, Equatable {
        case tooLarge(Int)
        case malformed(String, id: String?)
    }

    /// Reads a payload; the problem says what is wrong, with the id when there is one.
    init(parsing payload: Data) throws(Problem) {
        guard payload.count <= RigProtocol.maximumCommandBytes else { throw .tooLarge(payload.count) }
        guard let object = (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any] else {
            throw .malformed("not a JSON object; send {\"id\": \"…\", \"event\": \"capture\"}", id: nil)
        }
        let id = (object["id"] as? String) ?? (object["id"] as? NSNumber).map { "\($0)" }
        guard let id, !id.isEmpty, id.utf8.count <= 256 else {
            throw .malformed("'id' is missing: every command needs a unique id (a string), which the answers carry", id: nil)
        }
        guard let event = object["event"] as? String else { throw .malformed("'event' is missing or not a string", id: id) }
        func time(_ key: String) throws(Problem) -> Double? {
            guard let value = object[key], !(value is NSNull) else { return nil }
            // JSON true and false arrive as NSNumber too, of a Boolean subclass.
            guard let number = value as? NSNumber, !String(describing: type(of: value)).contains("Boolean") else {
                throw .malformed("'\(key)' must be a Unix time in milliseconds", id: id)
            }
            return number.doubleValue
        }
        self.id = id
        self.event = event
        at = try time("at")
        expires = try time("expires")
        if let value = object["label"], !(value is NSNull) {
            guard let text = value as? String else { throw .malformed("'label' must be a string", id: id) }
            label = text
        }
        if let value = object["sequence"], !(value is NSNull) {
            guard let text = value as? String, !text.isEmpty, text.utf8.count <= 128 else { throw .malformed("'sequence' must be a sequence's name", id: id) }
            sequence = text
        }
    }

    init(id: String, event: String, at: Double? = nil, expires: Double? = nil, label: String? = nil, sequence: String? = nil) {
        self.id = id
        self.event = event
        self.at = at
        self.expires = expires
        self.label = label
        self.sequence = sequence
    }

    var payload: Data {
        var object: [String: Any] = ["id": id, "event": event]
        if let at { object["at"] = at }
        if let expires { object["expires"] = expires }
        if let label { object["label"] = label }
        if let sequence { object["sequence"] = sequence }
        return RigProtocol.encode(object)
    }
}
