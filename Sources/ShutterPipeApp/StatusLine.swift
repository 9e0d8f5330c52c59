import Foundation
import ShutterPipeKit
import ShutterPipeRuntime
import ShutterPipeSupport

/// The text of the live status line photographers glance at between shots.
enum StatusLine {
    static func text(_ status: CoordinatorStatus, freeBytes: Int64?, camera: CameraStatus? = nil) -> String {
        var parts = [status.inPhotoMode ? "● photo mode" : "○ idle"]
        parts.append("\(status.photosStored) shot\(status.photosStored == 1 ? "" : "s")")
        if status.photosFailed > 0 { parts.append("\(status.photosFailed) failed") }
        if let time = status.lastShotTime, let duration = status.lastShotDuration {
            let formatter = DateFormatter()
            formatter.dateFormat = "HH:mm:ss"
            parts.append("last \(formatDuration(duration)) at \(formatter.string(from: time))")
        }
        if let freeBytes { parts.append("disk \(formatByteCount(freeBytes)) free") }
        if let battery = camera?.battery { parts.append("battery \(battery)") }
        if let card = camera?.freeCardBytes { parts.append("card \(formatByteCount(card)) free") }
        return parts.joined(separator: " · ") + "  › "
    }
}
