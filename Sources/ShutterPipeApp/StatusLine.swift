import Foundation
import ShutterPipeKit

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
        if let freeBytes { parts.append("disk \(byteCount(freeBytes)) free") }
        if let battery = camera?.battery { parts.append("battery \(battery)") }
        if let card = camera?.freeCardBytes { parts.append("card \(byteCount(card)) free") }
        return parts.joined(separator: " · ") + "  › "
    }

    static func byteCount(_ bytes: Int64) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1000 && unit < units.count - 1 { value /= 1000; unit += 1 }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }
}
