import Dispatch
import Foundation

/// "250 ms", "2 s", "1.5 s", "2 min".
public func formatDuration(_ duration: Duration) -> String {
    let seconds = duration.inSeconds
    if seconds < 1 { return "\(Int((seconds * 1000).rounded())) ms" }
    if seconds < 120 {
        let rounded = (seconds * 10).rounded() / 10
        return rounded == rounded.rounded() ? "\(Int(rounded)) s" : "\(rounded) s"
    }
    return "\(Int((seconds / 60).rounded())) min"
}

/// The one place a `Duration` becomes a number (PluginOptions.parseDuration is the one
/// place text becomes a `Duration`; formatDuration the one place it becomes words).
extension Duration {
    /// The duration in milliseconds, as a floating-point number.
    public var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }

    /// The duration in seconds, as a floating-point number (for `Date` and `TimeInterval`).
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// Whole nanoseconds, clamped to what an `Int` holds (for Dispatch and C timeouts).
    public var inNanoseconds: Int {
        let (seconds, attoseconds) = components
        let (whole, overflow) = Int(clamping: seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? Int.min : Int.max }
        return whole.addingReportingOverflow(Int(attoseconds / 1_000_000_000)).overflow ? Int.max : whole + Int(attoseconds / 1_000_000_000)
    }

    /// Now plus this duration, for `DispatchSemaphore.wait(timeout:)`.
    public var fromNow: DispatchTime { .now() + .nanoseconds(inNanoseconds) }
}

/// "512 B", "1.5 MB", "31.2 GB": decimal units, as disks are sold.
public func formatByteCount(_ bytes: Int64) -> String {
    let units = ["B", "KB", "MB", "GB", "TB"]
    var value = Double(bytes)
    var unit = 0
    while value >= 1000 && unit < units.count - 1 { value /= 1000; unit += 1 }
    return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
}

/// A size from a config: `500MB`, `2GB`, `1.5TB`, `0` (decimal units, as disks are
/// sold; `KiB`, `MiB`, `GiB` and `TiB` are binary). nil for anything else.
public func parseByteCount(_ text: String) -> Int64? {
    let trimmed = text.trimmingCharacters(in: .whitespaces).uppercased()
    let units: [(String, Double)] = [("TIB", 1_099_511_627_776), ("GIB", 1_073_741_824), ("MIB", 1_048_576), ("KIB", 1024),
                                     ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3), ("B", 1)]
    let (number, scale) = units.first { trimmed.hasSuffix($0.0) }.map { (String(trimmed.dropLast($0.0.count)), $0.1) } ?? (trimmed, 1)
    guard let value = Double(number.trimmingCharacters(in: .whitespaces)), value >= 0, value * scale < 9e18 else { return nil }
    return Int64(value * scale)
}

/// Rows as aligned columns, two spaces apart: every column but the last is padded to its
/// widest cell, and trailing spaces are trimmed. For command output (`shutterpipe
/// cameras`, `camera settings`, `get`).
public func formatColumns(_ rows: [[String]], indent: String = "") -> [String] {
    let columns = rows.map(\.count).max() ?? 0
    let widths = (0..<columns).map { column in rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
    return rows.map { row in
        let cells = row.enumerated().map { index, cell in
            index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
        }
        return (indent + cells.joined(separator: "  ")).replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
    }
}
