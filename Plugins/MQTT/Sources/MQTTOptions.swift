import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// The options of an `mqtt` trigger (Plugins/MQTT/README.md).
public struct MQTTOptions: Sendable {
    /// `mqtt://host:port` or `mqtts://host:port`.
    public var broker = "mqtt://127.0.0.1:1883"
    /// The rig this node belongs to: its topics are `shutterpipe/<rig>/…`.
    public var rig = "studio"
    /// This node's name in the rig (default: the host name).
    public var node = MQTTOptions.hostName
    public var username: String?
    public var password: String?
    /// The PEM file of the CA that signed the broker's certificate, for `mqtts://`
    /// (default: the system's CAs).
    public var ca: String?
    /// How often the broker and the node check on each other; a vanished node goes offline
    /// through its last will within 1.5× this.
    public var keepalive: Duration = .seconds(10)
    /// How late after its `at` a command may still fire.
    public var lateAfter: Duration = .milliseconds(50)
    /// Command events to shutter events; by default `enter`, `capture`, `exit`.
    public var map = EventMap(MQTTOptions.defaultMap)
    /// Commands run for each state this node answers.
    public var feedback = StateCommands()

    static let defaultMap: [String: ShutterEvent] = ["enter": .enter, "capture": .capture, "exit": .exit]

    /// The defaults.
    public init() {}

    /// Reads a config's options; a mistake names its line.
    public init(_ options: PluginOptions) throws {
        self.init()
        broker = try options.string("broker", default: broker)
        ca = try options.path("ca")
        do { _ = try BrokerAddress(parsing: broker, caFile: ca) } catch {
            throw options.error("\(error.message)\(error.fix.map { "; \($0)" } ?? "")", key: "broker")
        }
        rig = try options.string("rig", default: rig)
        guard RigProtocol.isValidName(rig) else { throw options.error("'rig' must be a name without '/', '+' or '#'; got '\(rig)'", key: "rig") }
        node = try options.string("node", default: node)
        guard RigProtocol.isValidName(node) else { throw options.error("'node' must be a name without '/', '+' or '#'; got '\(node)'", key: "node") }
        username = try options.string("username")
        password = try options.string("password")
        if let file = try options.path("passwordFile") {
            guard password == nil else { throw options.error("give 'password' or 'passwordFile', not both", key: "passwordFile") }
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw options.error("cannot read the password file '\(file)'; check that it exists and that this user may read it", key: "passwordFile")
            }
            password = String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
        }
        if password != nil && username == nil { throw options.error("a 'password' needs a 'username'", key: "password") }
        keepalive = try options.duration("keepalive", default: keepalive)
        guard keepalive >= .seconds(5), keepalive <= .seconds(3600) else {
            throw options.error("'keepalive' must be from 5s to 1h (libmosquitto's limits)", key: "keepalive")
        }
        lateAfter = try options.duration("lateAfter", default: lateAfter)
        map = try EventMap(options, defaults: Self.defaultMap, known: ["enter", "capture", "exit"])
        feedback = try StateCommands(options)
    }

    /// The broker, parsed; a `broker` set in code that is no URL fails here, never falls
    /// back to another broker.
    func address() throws(ShutterError) -> BrokerAddress { try BrokerAddress(parsing: broker, caFile: ca) }

    /// The host name, up to its first dot.
    static var hostName: String {
        let name = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "node"
        return RigProtocol.isValidName(name) ? name : "node"
    }
}
