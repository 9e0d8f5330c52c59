import Foundation
import ShutterPipeSupport

/// What `shutterpipe rig` prints: a table or JSON, and the problems that make it fail.
/// What the nodes wrote (names, paths, messages) is printed with its control characters
/// escaped: an answer cannot move the cursor, clear the screen or forge a line.
struct RigReport: Sendable {
    var action: String
    var rig: String
    var nodes: [RigSession.Node]
    /// The proven answers of the known nodes.
    var answers: [String: RigAnswer]
    /// Nodes that gave two different answers to the command.
    var conflicts: [String: [RigAnswer]] = [:]
    /// Answers not counted, and why.
    var ignored: [String] = []
    /// `status`: each online node's clock against this host's.
    var clocks: [String: RigSession.ClockReading] = [:]

    init(action: String, rig: String, nodes: [RigSession.Node], collected: RigSession.Collected = RigSession.Collected()) {
        self.action = action
        self.rig = rig
        self.nodes = nodes
        answers = collected.answers
        conflicts = collected.conflicts
        ignored = collected.ignored
    }

    /// The state that means success for the action.
    private var success: String {
        switch action {
        case "enter": "enteredPhotoMode"
        case "exit": "exitedOrUnableToEnter"
        case "label": "labelled"
        case "sequence": "sequenceDone"
        default: "photoSuccess"
        }
    }

    /// Every known node (announced on the presence or state topics), sorted. A node that
    /// only answers is never counted.
    private var names: [String] { Set(nodes.map(\.name)).sorted() }

    private func isOnline(_ name: String) -> Bool { nodes.first { $0.name == name }?.online ?? true }

    private var earliest: Double? { answers.values.compactMap(\.capturedAt).min() }

    /// The spread of capture times, in ms, when at least one node reported one.
    var spread: Double? {
        let times = answers.values.compactMap(\.capturedAt)
        guard let low = times.min(), let high = times.max() else { return nil }
        return high - low
    }

    var succeeded: Bool {
        guard action != "status" else { return !nodes.isEmpty }
        return !names.isEmpty && conflicts.isEmpty && names.allSatisfy { name in
            guard let answer = answers[name] else { return false }
            return answer.state == success && (action != "exit" || answer.cause == nil)
        }
    }

    var problems: [String] {
        if nodes.isEmpty {
            return ["no node of rig '\(rig)' has announced itself on this broker; start nodes with an mqtt trigger whose rig is '\(rig)'"]
        }
        guard action != "status" else { return [] }
        var found: [String] = []
        for name in names where answers[name] == nil && conflicts[name] == nil {
            found.append(isOnline(name) ? "node '\(name)' did not answer in time" : "node '\(name)' is offline")
        }
        for name in names {
            guard let answer = answers[name], answer.state != success || (action == "exit" && answer.cause != nil) else { continue }
            found.append("node '\(name)': \(answer.error ?? [answer.state, answer.cause, answer.message].compactMap { $0 }.joined(separator: ": "))")
        }
        for (name, different) in conflicts.sorted(by: { $0.key < $1.key }) {
            let said = different.map(describe).joined(separator: "; ")
            found.append("node '\(name)' gave different answers to this command (\(said)): another client writes its topics; "
                         + "give each node its own broker user under the ACL of docs/rigs.md")
        }
        return (found + ignored).map(LogText.escaped)
    }

    private func describe(_ answer: RigAnswer?) -> String {
        guard let answer else { return "—" }
        if let error = answer.error { return "error: \(error)" }
        if let summary = answer.summary { return summary }  // a sequence's: its state and counts
        return [answer.state, answer.cause].compactMap { $0 }.joined(separator: " ")
    }

    var table: [String] {
        var rows: [[String]]
        if action == "status" {
            rows = [["NODE", "PRESENCE", "CLOCK", "LAST", "PATHS"]]
            for node in nodes {
                rows.append([node.name, node.online ? "online" : "offline", clocks[node.name].map(Self.clockText) ?? "—",
                             node.last.map { [$0.event, describe($0)].compactMap { $0 }.joined(separator: " → ") } ?? "—",
                             node.last?.paths.joined(separator: " ") ?? ""])
            }
        } else {
            rows = [["NODE", "STATE", "OFFSET", "PATHS"]]
            for name in names {
                let answer = answers[name]
                let offset = answer?.capturedAt.flatMap { time in earliest.map { String(format: "+%.2f ms", time - $0) } } ?? ""
                let state = conflicts[name] != nil ? "conflict" : answer == nil ? (isOnline(name) ? "no answer" : "offline") : describe(answer)
                rows.append([name, state, offset, answer?.paths.joined(separator: " ") ?? ""])
            }
        }
        rows = rows.map { $0.map(LogText.escaped) }
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        var lines = rows.map { row in
            zip(row, widths).map { $0.0.padding(toLength: $0.1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }
        if action != "status" {
            let answered = answers.values.filter { $0.capturedAt != nil }.count
            lines.append(spread.map { String(format: "spread: %.2f ms across %d node(s)", $0, answered) } ?? "spread: none (no node reported a capture time)")
        }
        return lines
    }

    var json: String {
        var list: [[String: Any]] = []
        for name in names {
            var entry: [String: Any] = ["node": name, "online": isOnline(name)]
            if let different = conflicts[name] { entry["conflict"] = different.map(Self.object) }
            if action == "status" {
                let last = nodes.first { $0.name == name }?.last
                entry["last"] = last.map(Self.object) ?? NSNull()
                if let clock = clocks[name] {
                    entry["clockOffset"] = clock.offset
                    entry["clockUncertainty"] = clock.uncertainty
                }
            } else if let answer = answers[name] {
                entry.merge(Self.object(answer)) { new, _ in new }
                if let time = answer.capturedAt, let earliest { entry["offset"] = time - earliest }
            } else {
                entry["state"] = NSNull()
                entry["problem"] = conflicts[name] != nil ? "conflict" : isOnline(name) ? "no answer" : "offline"
            }
            list.append(entry)
        }
        var object: [String: Any] = ["rig": rig, "action": action, "nodes": list]
        if action != "status" {
            object["spread"] = spread ?? NSNull()
            object["ignored"] = ignored
        }
        return String(decoding: RigProtocol.encode(object), as: UTF8.self)
    }

    /// `+3.2 ms ±0.4 ms`: the node's clock against this host's.
    static func clockText(_ clock: RigSession.ClockReading) -> String {
        String(format: "%+.1f ms ±%.1f ms", clock.offset, clock.uncertainty)
    }

    private static func object(_ answer: RigAnswer) -> [String: Any] {
        var object: [String: Any] = ["node": answer.node, "state": answer.state ?? NSNull(), "paths": answer.paths]
        if let id = answer.id { object["id"] = id }
        if let event = answer.event { object["event"] = event }
        if let error = answer.error { object["error"] = error }
        if let cause = answer.cause { object["cause"] = cause }
        if let message = answer.message { object["message"] = message }
        if let time = answer.capturedAt { object["capturedAt"] = time }
        if let summary = answer.summary { object["summary"] = summary }
        return object
    }
}
