import Foundation
import ShutterPipeKit
import ShutterPipeRuntime
import ShutterPipeSupport

/// The text of the live status line photographers glance at between shots.
enum StatusLine {
    static func text(_ status: CoordinatorStatus, freeBytes: Int64?, cameras: [CameraStatus] = [],
                     inFlight: [ShotTracker.Shot] = [], notes: [String] = [], now: ContinuousClock.Instant = .now) -> String {
        var parts = [status.inPhotoMode ? "● photo mode" : "○ idle"]
        // The shot in flight comes first: it is what the photographer waits for.
        parts += inFlight.map { shotText($0, now: now) }
        parts.append("\(status.photosStored) shot\(status.photosStored == 1 ? "" : "s")")
        if status.photosFailed > 0 { parts.append("\(status.photosFailed) failed") }
        if let time = status.lastShotTime, let duration = status.lastShotDuration {
            let formatter = DateFormatter()
            formatter.dateFormat = "HH:mm:ss"
            parts.append("last \(formatDuration(duration)) at \(formatter.string(from: time))")
        }
        if let freeBytes { parts.append("disk \(formatByteCount(freeBytes)) free") }
        for camera in cameras {
            var words: [String] = camera.name.map { [$0] } ?? []
            if !camera.connected { words.append("not connected") }
            if let battery = camera.battery { words.append("battery \(battery)") }
            if let card = camera.freeCardBytes { words.append("card \(formatByteCount(card)) free") }
            if !words.isEmpty { parts.append(words.joined(separator: " ")) }
        }
        // Work after the answers: queued copies and uploads, and a destination away.
        parts += notes.map(LogText.escaped)
        return parts.joined(separator: " · ") + "  › "
    }

    /// "shot 3 capturing 2.1 s", "shot 3 downloading 45 % of 24 MB", "shot 2 storing".
    static func shotText(_ shot: ShotTracker.Shot, now: ContinuousClock.Instant) -> String {
        let name = "shot \(shot.number)"
        switch shot.phase {
        case .capturing:
            let seconds = Double((now - shot.began).milliseconds) / 1000
            return "\(name) capturing \(String(format: "%.1f", max(0, seconds))) s"
        case .downloading:
            let files = shot.files > 1 ? " (\(shot.files) files)" : ""
            guard let total = shot.total, total > 0 else { return "\(name) downloading \(formatByteCount(shot.bytes))\(files)" }
            let percent = min(100, Int(Double(shot.bytes) * 100 / Double(total)))
            return "\(name) downloading \(percent) % of \(formatByteCount(total))\(files)"
        case .storing:
            return "\(name) storing"
        }
    }
}
