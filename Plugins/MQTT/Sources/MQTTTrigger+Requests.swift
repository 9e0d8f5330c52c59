import Foundation
import ShutterPipeKit
import Synchronization

/// The rig's commands that are not shutter events: a session label and a sequence, each in
/// its turn among the node's events, each answered once on the node's state topic.
extension MQTTTrigger {
    /// A `label` command: the session label, in its turn among the events; the answer is
    /// published as `labelled` (or `labelRefused`, with the reason).
    func setLabel(_ command: RigCommandMessage, proof secret: String) {
        let request = LabelRequest(command.label ?? "", origin: "mqtt \(command.id)")
        eventChannel?.send(request) { [weak self] answer in
            guard let self else { return }
            var object: [String: Any] = ["id": command.id, "node": self.options.node, "event": command.event, "paths": [String](), "proof": secret,
                                         "state": answer.failure == nil ? "labelled" : "labelRefused", "label": answer.label ?? ""]
            if let failure = answer.failure { object["cause"] = failure.cause.rawValue; object["message"] = failure.description }
            self.publishState(object)
        }
    }

    /// A `sequence` command: the sequence the config plans under its name, in its turn among
    /// the events; published once it has ended, as `sequenceDone` (`sequenceCancelled`,
    /// `sequenceFailed`, `sequenceRefused`), with its counts and every frame's files.
    func runSequence(_ command: RigCommandMessage, proof secret: String) {
        guard let name = command.sequence else {
            refuse(command.id, "a sequence command names the sequence: {\"id\": \"…\", \"event\": \"sequence\", \"sequence\": \"stack\"}", proof: secret)
            return
        }
        let paths = Mutex<[String]>([])
        let request = SequenceRequest(name, origin: "mqtt \(command.id)") { frame in paths.withLock { $0 += frame.stored.map(\.location) } }
        eventChannel?.send(request) { [weak self] answer in
            guard let self else { return }
            var object: [String: Any] = ["id": command.id, "node": self.options.node, "event": command.event, "sequence": name, "proof": secret,
                                         "state": String(answer.summary.prefix { $0 != " " }), "summary": answer.summary, "taken": answer.taken,
                                         "failed": answer.failed, "skipped": answer.skipped, "cancelled": answer.cancelled, "paths": paths.withLock { $0 }]
            if let failure = answer.failure { object["cause"] = failure.cause.rawValue; object["message"] = failure.description }
            self.publishState(object)
        }
    }
}
