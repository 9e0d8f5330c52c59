import Foundation
import ShutterPipeKit
import ShutterPipeRuntime
import ShutterPipeSupport

/// The text of the live status line photographers glance at between shots.
enum StatusLine {
    static func text(_ status: CoordinatorStatus, freeBytes: Int64?, cameras: [CameraStatus] = []) -> String {
        var parts = [status.inPhotoMode ? "● photo mode" : "○ idle"]
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
        return parts.joined(separator: " · ") + "  › "
    }
}
