import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// One log record per answer, and per shot the camera took by itself: a line for people,
/// and fields for `--log-format json` (event, trigger, state, ms, shot, captureMs,
/// storeMs, cause, message, files, cameraFiles, warnings).
struct AnswerLog: Sendable {
    let log: Logger

    /// Logs an answer delivered to `trigger`.
    func answered(_ answer: ShutterAnswer, by trigger: String) {
        let event = answer.request.event.rawValue
        var fields: [(String, String)] = [("event", event), ("trigger", trigger), ("state", answer.state.rawValue),
                                          ("ms", Self.ms(answer.duration))]
        if let origin = answer.request.origin { fields.append(("origin", origin)) }
        fields += Self.shotFields(answer)
        var message = "\(event) from \(trigger) → \(answer.state.rawValue) in \(formatDuration(answer.duration))"
        message += Self.outcome(answer, into: &fields)
        log.log(answer.failure == nil ? .info : (answer.state == .photoFailed ? .error : .warning), message, fields)
    }

    /// Logs the outcome of a shot taken with the camera's own button.
    func cameraShot(_ answer: ShutterAnswer) {
        let shot = answer.shotNumber.map { "#\($0)" } ?? ""
        var fields: [(String, String)] = [("event", "cameraShot"), ("state", answer.state.rawValue), ("ms", Self.ms(answer.duration))]
        fields += Self.shotFields(answer)
        if answer.failure != nil {
            var message = "camera shot \(shot) not stored after \(formatDuration(answer.duration))"
            message += Self.outcome(answer, into: &fields)
            log.error(message, fields)
        } else {
            var message = "camera shot \(shot) → photoSuccess in \(formatDuration(answer.duration))"
            message += Self.outcome(answer, into: &fields)
            log.info(message, fields)
        }
    }

    /// Logs a session label set or cleared by `trigger`, or refused.
    func label(_ label: String?, by trigger: String, failure: ShutterError?) {
        var fields: [(String, String)] = [("event", "label"), ("trigger", trigger)]
        if let failure {
            fields += [("cause", failure.cause.rawValue), ("message", failure.description)]
            return log.warning("label from \(trigger) refused: \(failure)", fields)
        }
        fields.append(("label", label ?? ""))
        log.info(label.map { "label '\(LogText.escaped($0))' from \(trigger): the next shots carry it" } ?? "label cleared by \(trigger)", fields)
    }

    /// Logs the answer to a settings request from `trigger`: each setting as applied or
    /// read, or the refusal.
    func settings(_ answer: SettingsAnswer, by trigger: String) {
        let verb: String
        switch answer.request.action {
        case .read: verb = "settings read"
        case .change: verb = "settings change"
        @unknown default: verb = "settings request"
        }
        var fields: [(String, String)] = [("event", "settings"), ("trigger", trigger), ("ms", Self.ms(answer.duration))]
        if let origin = answer.request.origin { fields.append(("origin", origin)) }
        if let camera = answer.request.camera { fields.append(("camera", camera)) }
        let values = answer.settings.map { ($0.camera.map { "\($0)." } ?? "") + "\($0.key)=\($0.value)" }.joined(separator: " ")
        if let failure = answer.failure {
            fields += [("cause", failure.cause.rawValue), ("message", failure.description)]
            log.warning("\(verb) from \(trigger) refused in \(formatDuration(answer.duration)): \(failure.cause.rawValue): \(failure)", fields)
        } else {
            fields.append(("settings", values))
            if case .change = answer.request.action {
                log.info("\(verb) from \(trigger) applied in \(formatDuration(answer.duration)): \(values)", fields)
            } else {
                log.debug("\(verb) from \(trigger) in \(formatDuration(answer.duration)): \(answer.settings.count) setting(s)", fields)
            }
        }
    }

    private static func shotFields(_ answer: ShutterAnswer) -> [(String, String)] {
        var fields: [(String, String)] = []
        if let shot = answer.shot { fields += [("shot", String(shot.number)), ("shotID", shot.description)] }
        if let capture = answer.captureDuration { fields.append(("captureMs", ms(capture))) }
        if let store = answer.storeDuration { fields.append(("storeMs", ms(store))) }
        return fields
    }

    /// ": cause: message" (and what was stored all the same: the other cameras' photos
    /// of a rig), or ": the stored locations", then any warnings.
    private static func outcome(_ answer: ShutterAnswer, into fields: inout [(String, String)]) -> String {
        var text = ""
        if let failure = answer.failure {
            fields += [("cause", failure.cause.rawValue), ("message", failure.description)]
            text += ": \(failure.cause.rawValue): \(failure)"
            if !answer.stored.isEmpty {
                let locations = answer.stored.map(\.location).joined(separator: " ")
                fields.append(("files", locations))
                text += "; stored all the same: \(locations)"
            }
        } else if !answer.stored.isEmpty {
            let locations = answer.stored.map(\.location).joined(separator: " ")
            fields.append(("files", locations))
            text += ": \(locations)"
        }
        if !answer.records.isEmpty {
            fields.append(("records", answer.records.map(\.location).joined(separator: " ")))
        }
        // The camera's own names for what was stored (IMG_0099.JPG), once each.
        var cameraFiles: [String] = []
        for name in answer.stored.compactMap(\.cameraFile) where !cameraFiles.contains(name) { cameraFiles.append(name) }
        if !cameraFiles.isEmpty {
            fields.append(("cameraFiles", cameraFiles.joined(separator: " ")))
            text += " (camera: \(cameraFiles.joined(separator: " ")))"
        }
        if !answer.warnings.isEmpty {
            fields.append(("warnings", answer.warnings.joined(separator: "; ")))
            text += " (warning: \(answer.warnings.joined(separator: "; ")))"
        }
        return text
    }

    private static func ms(_ duration: Duration) -> String {
        String(format: "%.1f", duration.milliseconds)
    }
}
