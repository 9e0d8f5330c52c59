#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing

/// A real mosquitto on loopback, started by the test on a free port: anonymous, or with a
/// password file, and with TLS from a CA the test makes; or a rig's broker under the ACL
/// that docs/rig-acl.conf ships, where each node, the rig command ('rig') and an
/// 'intruder' have users of their own. Killed when dropped.
public final class Broker: Sendable {
    public let port: UInt16
    public let folder: TemporaryDirectory
    public let tls: Bool
    private let config: String
    private let process = Mutex<RunningProcess?>(nil)
    /// Under docs/rig-acl.conf: clients connect as a user (``password(for:)``).
    public let rigACL: Bool

    /// The password of a user of a rig broker.
    public static func password(for user: String) -> String { "pw-\(user)" }

    /// The CA certificate clients trust, when `tls`.
    public var caFile: String { folder.file("ca.crt") }
    public var url: String { tls ? "mqtts://localhost:\(port)" : "mqtt://127.0.0.1:\(port)" }

    /// `rigNodes`: under the rig ACL, with a user for each of these nodes, 'rig' and 'intruder'.
    public init(_ label: String, users: [String: String] = [:], tls: Bool = false, rigNodes: [String]? = nil) async throws {
        folder = TemporaryDirectory("broker-\(label)")
        port = try freePort()
        self.tls = tls
        rigACL = rigNodes != nil
        var users = users
        for user in (rigNodes ?? []) + (rigNodes == nil ? [] : ["rig", "intruder"]) { users[user] = Self.password(for: user) }
        var lines = ["user root", "listener \(port) 127.0.0.1", "allow_anonymous \(users.isEmpty)", "log_dest stderr",
                     "log_type error", "log_type warning", "log_type notice"]
        if !users.isEmpty {
            let file = folder.file("passwords")
            try users.map { "\($0.key):\($0.value)" }.joined(separator: "\n").appending("\n").writeTestFile(file)
            try await Self.run(["mosquitto_passwd", "-U", file])
            chmod(file, 0o600)
            lines.append("password_file \(file)")
        }
        if rigACL { lines.append("acl_file \(repositoryRoot)/docs/rig-acl.conf") }
        if tls {
            try await Self.makeCertificates(in: folder)
            lines += ["cafile \(folder.file("ca.crt"))", "certfile \(folder.file("server.crt"))", "keyfile \(folder.file("server.key"))"]
        }
        config = folder.file("mosquitto.conf")
        try (lines.joined(separator: "\n") + "\n").writeTestFile(config)
        try await start()
    }

    deinit {
        process.withLock { $0?.signal(SIGKILL) }
    }

    /// Starts the broker and waits until it accepts connections.
    public func start() async throws {
        let started = try await RunningProcess.start(program: try Self.mosquitto(), ["-c", config], in: folder.path)
        process.withLock { $0 = started }
        let port = self.port
        guard await eventually(timeout: .seconds(60), { portAccepts(port) }) else {
            throw TestSupportError("mosquitto did not start: \(started.stderrSoFar)")
        }
    }

    /// Stops it (SIGTERM) and waits for the end.
    public func stop() async {
        guard let running = process.withLock({ state -> RunningProcess? in defer { state = nil }; return state }) else { return }
        running.signal(SIGTERM)
        _ = await running.wait(timeout: .seconds(60))
    }

    public var log: String { process.withLock { $0?.stderrSoFar ?? "" } }

    private static func mosquitto() throws -> String {
        for candidate in ["/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto", "/usr/bin/mosquitto"] where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        throw TestSupportError("mosquitto is not installed (scripts/bootstrap installs it)")
    }

    @discardableResult
    public static func run(_ arguments: [String]) async throws -> String {
        let output = try await runProgram(arguments)
        guard output.status == 0 else { throw TestSupportError("\(arguments.joined(separator: " ")) failed: \(output.text)") }
        return output.text
    }

    /// A CA, and a server certificate for localhost and 127.0.0.1 that it signs.
    private static func makeCertificates(in folder: TemporaryDirectory) async throws {
        let ca = folder.file("ca"), server = folder.file("server")
        try await run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=shutterpipe test CA",
                       "-keyout", "\(ca).key", "-out", "\(ca).crt"])
        try await run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", "\(server).key", "-out", "\(server).csr"])
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".writeTestFile("\(server).ext")
        try await run(["openssl", "x509", "-req", "-in", "\(server).csr", "-CA", "\(ca).crt", "-CAkey", "\(ca).key", "-CAcreateserial",
                       "-days", "2", "-extfile", "\(server).ext", "-out", "\(server).crt"])
    }
}

/// A TCP port nothing listens on now.
public func freePort() throws -> UInt16 {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
    }
    guard bound else { throw TestSupportError("no free port: \(String(cString: strerror(errno)))") }
    return UInt16(bigEndian: address.sin_port)
}

/// A `shutterpipe run` node of a rig: file-stub, an mqtt trigger, files. Stopped when dropped.
public final class RigNode: Sendable {
    public let name: String
    public let folder: TemporaryDirectory
    public let session: RunningProcess

    /// Nodes of these names with the defaults, started one after the other.
    public static func several(_ names: [String], broker: Broker) async throws -> [RigNode] {
        var nodes: [RigNode] = []
        for name in names { nodes.append(try await RigNode(name, broker: broker)) }
        return nodes
    }

    /// `extra`: more options of its mqtt trigger; `triggers`: more triggers, as YAML flow maps;
    /// `sequences`: the config's `sequences:`, as a YAML flow map.
    public init(_ name: String, broker: Broker, rig: String = "test", extra: String = "", backend: String = "{type: file-stub, width: 320, height: 240}",
                triggers: [String] = [], verbose: Bool = false, environment: [String: String] = [:], sequences: String = "") async throws {
        self.name = name
        folder = TemporaryDirectory("rig-node-\(name)")
        let ca = broker.tls ? ", ca: \(broker.caFile)" : ""
        let user = broker.rigACL ? ", username: \(name), password: \(Broker.password(for: name))" : ""
        let config = try writeConfig("""
        version: 1
        session: \(name)
        backend: \(backend)
        triggers:
          - {type: mqtt, broker: "\(broker.url)", rig: \(rig), node: \(name), keepalive: 5s\(ca)\(user)\(extra)}
        \(triggers.map { "  - \($0)" }.joined(separator: "\n"))
        sinks: [{type: files, directory: \(folder.file("out"))}]
        \(sequences.isEmpty ? "" : "sequences: \(sequences)")
        """, in: folder)
        session = try await RunningProcess.start(["run", "--config", config, "--no-status"] + (verbose ? ["--verbose"] : []), in: folder.path, environment: environment)
    }

    deinit {
        session.signal(SIGKILL)
    }

    /// The photos it stored.
    public var photos: [String] { folder.names("out").filter { $0.hasSuffix(".jpg") } }

    public var isOnline: Bool { session.stderrSoFar.contains("of rig") && session.stderrSoFar.contains("online") }
}

/// `shutterpipe rig …` against `broker`.
public func rig(_ arguments: [String], broker: Broker, rig: String = "test", in folder: TemporaryDirectory, timeout: Duration = .seconds(30)) async throws -> Outcome {
    var all = ["rig"] + arguments + ["--broker", broker.url, "--rig", rig]
    if broker.tls && !arguments.contains("--ca") { all += ["--ca", broker.caFile] }
    // A loaded CI machine can take seconds to open a camera or start a node's answer.
    if !arguments.contains("--timeout") { all += ["--timeout", "30s"] }
    var environment: [String: String] = [:]
    if broker.rigACL && !arguments.contains("--username") {
        all += ["--username", "rig"]
        environment["SHUTTERPIPE_MQTT_PASSWORD"] = Broker.password(for: "rig")
    }
    return try await shutterpipe(all, in: folder.path, environment: environment, timeout: timeout)
}

/// `rig status --json`, parsed: node name to its entry.
public func rigStatus(_ broker: Broker, in folder: TemporaryDirectory, extra: [String] = []) async throws -> [String: [String: Any]] {
    let outcome = try await rig(["status", "--json"] + extra, broker: broker, in: folder)
    guard let object = try? JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any],
          let nodes = object["nodes"] as? [[String: Any]] else { return [:] }
    return Dictionary(uniqueKeysWithValues: nodes.compactMap { entry in (entry["node"] as? String).map { ($0, entry) } })
}

/// Publishes one raw message with mosquitto_pub, as any MQTT client would: on a rig
/// broker as `user` ('rig' unless told), `retained` with the retain flag.
public func publish(_ payload: String? = nil, file: String? = nil, to topic: String, broker: Broker, as user: String = "rig",
                    retained: Bool = false) async throws {
    var arguments = ["mosquitto_pub", "-h", "127.0.0.1", "-p", String(broker.port), "-q", "1", "-t", topic]
    if broker.rigACL { arguments += ["-u", user, "-P", Broker.password(for: user)] }
    if retained { arguments.append("-r") }
    if let file { arguments += ["-f", file] } else { arguments += ["-m", payload ?? ""] }
    try await Broker.run(arguments)
}

/// A mosquitto_sub on the rig's state and presence topics, for the whole test: checking
/// what the nodes said costs a read of its output, not a process per poll.
public final class StateWatcher: Sendable {
    private let process: RunningProcess

    public init(_ broker: Broker, rig: String = "test", in folder: TemporaryDirectory) async throws {
        process = try await RunningProcess.start(program: "/usr/bin/mosquitto_sub",
                                     ["-h", "127.0.0.1", "-p", String(broker.port), "-q", "1", "-v"]
                                        + (broker.rigACL ? ["-u", "rig", "-P", Broker.password(for: "rig")] : []) + [
                                      "-t", "shutterpipe/\(rig)/node/+/state", "-t", "shutterpipe/\(rig)/node/+/online"], in: folder.path)
    }

    deinit {
        process.signal(SIGKILL)
    }

    /// Every message so far, in order: (node, leaf, payload).
    private var messages: [(node: String, leaf: String, payload: String)] {
        process.stdoutSoFar.split(separator: "\n").compactMap { line in
            guard let space = line.firstIndex(of: " ") else { return nil }
            let topic = line[..<space].split(separator: "/")
            guard topic.count == 5 else { return nil }
            return (String(topic[3]), String(topic[4]), String(line[line.index(after: space)...]))
        }
    }

    /// Each node's last answer, parsed.
    public var states: [String: [String: Any]] {
        var found: [String: [String: Any]] = [:]
        for message in messages where message.leaf == "state" {
            found[message.node] = (try? JSONSerialization.jsonObject(with: Data(message.payload.utf8))) as? [String: Any]
        }
        return found
    }

    /// Each node's presence, as last said.
    public var online: [String: Bool] {
        var found: [String: Bool] = [:]
        for message in messages where message.leaf == "online" { found[message.node] = message.payload == "true" }
        return found
    }
}
