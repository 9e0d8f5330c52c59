import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// `shutterpipe rig capture|enter|exit|status`: one command to every node of a rig
/// through its broker, and every node's answer; or the nodes and their last states.
struct RigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rig", abstract: "fire every node of a rig through its MQTT broker (capture, enter, exit), run a sequence on each (sequence --text NAME), set their session label (label --text), or list its nodes (status)",
        discussion: """
        capture, enter and exit publish one command on shutterpipe/RIG/command and collect
        the answer of every node known from the presence topics, online or not; an answer
        counts only from the node it names, proven by the node's acknowledgement, and two
        different answers from one node are a conflict (exit 1). The table
        gives each node's state, its capture time's offset from the earliest node, and its
        paths; the last line is the spread. Exits 0 only when every known node answered
        with success; a node that is offline or does not answer in time is named, and the
        exit is 1. status lists the nodes, online or offline, with their last answers and
        how far each online node's clock is from this host's.
        With --at, every node fires at that moment by its own clock (keep the clocks
        together with chrony or NTP: docs/rigs.md).
        sequence --text NAME starts the sequence each node's config plans under NAME (a
        spin, a bracket) as its command arrives; each node answers once its sequence has
        ended (sequenceDone, with its frames' paths). --timeout must cover the sequence.
        """)

    @Argument(valueName: "ACTION", help: "capture, enter, exit, label or sequence (with --text), or status")
    var action: String

    @Option(valueName: "URL", help: "the broker: mqtt://HOST:PORT, or mqtts://HOST:PORT with --ca")
    var broker: String = "mqtt://127.0.0.1:1883"

    @Option(valueName: "NAME", help: "the rig")
    var rig: String = "studio"

    @Option(valueName: "+DELAY", help: "fire this long from now, such as +300ms (every node by its own clock)")
    var at: String?

    @Option(valueName: "TEXT", help: "for label: the session label every node's next shots carry (\"\" clears it); for sequence: the sequence's name")
    var text: String?

    @Option(valueName: "DURATION", help: "how long to wait for the answers")
    var timeout: Duration = .seconds(5)

    @Flag(help: "print the answers as JSON")
    var json = false

    @Option(valueName: "USER", help: "the broker's user name (the password from --password-file or $SHUTTERPIPE_MQTT_PASSWORD)")
    var username: String?

    @Option(valueName: "FILE", help: "a file whose first line is the password")
    var passwordFile: String?

    @Option(valueName: "FILE", help: "the PEM file of the CA that signed the broker's certificate (mqtts://)")
    var ca: String?

    func run(_ context: CommandContext) async throws -> Int32 {
        guard ["capture", "enter", "exit", "label", "sequence", "status"].contains(action) else {
            throw UsageError("unknown action '\(action)'; use capture, enter, exit, label, sequence or status")
        }
        guard (action == "label" || action == "sequence") == (text != nil) else {
            throw UsageError(action == "label" ? "label needs --text: shutterpipe rig label --text ORDER-1234"
                             : action == "sequence" ? "sequence needs the sequence's name in --text: shutterpipe rig sequence --text spin --timeout 5m"
                             : "--text goes with label and sequence only")
        }
        guard action != "sequence" || at == nil else {
            throw UsageError("--at goes with capture, enter and exit: a sequence starts on every node as its command arrives, and keeps its own beat")
        }
        guard RigProtocol.isValidName(rig) else { throw UsageError("--rig must be a name without '/', '+' or '#'") }
        var fireDelay: Duration?
        if let at {
            guard at.hasPrefix("+"), let parsed = Duration(argument: String(at.dropFirst())) else {
                throw UsageError("--at takes a delay from now, such as +300ms or +2s; got '\(at)'")
            }
            fireDelay = parsed
        }
        let address: BrokerAddress
        do { address = try BrokerAddress(parsing: broker, caFile: ca) } catch { throw UsageError(error.message) }
        var password = ProcessInfo.processInfo.environment["SHUTTERPIPE_MQTT_PASSWORD"]
        if let passwordFile {
            guard let text = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
                throw UsageError("cannot read the password file '\(passwordFile)'")
            }
            password = String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
        }
        let credentials = username.map { (user: $0, password: password) }
        let (action, rig, timeout, json, delay, text) = (self.action, self.rig, self.timeout, self.json, fireDelay, self.text)
        let queue = BlockingQueue(label: "shutterpipe.rig")
        let outcome: Result<RigReport, ShutterError> = await queue.run {
            Result { () throws(ShutterError) -> RigReport in
                let session = try RigSession(broker: address, rig: rig, credentials: credentials)
                defer { session.close() }
                try session.connect(within: min(timeout, .seconds(10)))
                let nodes = try session.knownNodes()
                if action == "status" {
                    var report = RigReport(action: action, rig: rig, nodes: nodes)
                    report.clocks = session.readClocks(of: nodes, timeout: min(timeout, .seconds(2)))
                    return report
                }
                let now = RigProtocol.unixMilliseconds()
                let at = delay.map { now + Double($0 / .milliseconds(1)) }
                // Always an expiry: a command queued by a broker or a reconnect never fires
                // after this command has stopped waiting for it.
                let expires = (at ?? now) + Double(timeout / .milliseconds(1))
                let command = RigCommandMessage(id: UUID().uuidString.lowercased(), event: action, at: action == "label" || action == "sequence" ? nil : at,
                                                expires: action == "sequence" ? now + Double(min(timeout, .seconds(10)) / .milliseconds(1)) : expires,
                                                label: action == "label" ? text : nil, sequence: action == "sequence" ? text : nil)
                let collected = try session.send(command, awaiting: nodes, timeout: timeout + (delay ?? .zero))
                return RigReport(action: action, rig: rig, nodes: nodes, collected: collected)
            }
        }
        switch outcome {
        case .failure(let error):
            context.errors.printLine("shutterpipe rig: \(error.message)\(error.fix.map { "; \($0)" } ?? "")")
            return CommandContext.failure
        case .success(let report):
            if json {
                context.output.printLine(report.json)
            } else {
                report.table.forEach { context.output.printLine($0) }
            }
            report.problems.forEach { context.errors.printLine("shutterpipe rig: \($0)") }
            return report.succeeded ? CommandContext.success : CommandContext.failure
        }
    }
}
