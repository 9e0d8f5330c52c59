import Foundation

/// What cameras write in their settings' values, read as numbers: one reader for the host
/// (a sequence stepping a setting) and the camera backends (matching a wanted value).
public enum SettingText {
    /// The number a setting text stands for: `1/125` → 0.008, `0.0080s` → 0.008, `f/5.6` →
    /// 5.6, `ISO 200` → 200, `1000 mm` → 1000 (a number before its unit).
    public static func number(in text: String) -> Double? {
        var cleaned = text.lowercased()
        for noise in ["iso", "f/", "sec", "s"] { cleaned = cleaned.replacingOccurrences(of: noise, with: "") }
        cleaned = cleaned.trimmingCharacters(in: .whitespaces)
        if let slash = cleaned.firstIndex(of: "/") {
            guard let numerator = Double(cleaned[..<slash]), let denominator = Double(cleaned[cleaned.index(after: slash)...]),
                  denominator != 0 else { return nil }
            return numerator / denominator
        }
        if let value = Double(cleaned) { return value }
        // A number and its unit ("1000 mm", "2.5 m").
        let parts = cleaned.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[1].allSatisfy(\.isLetter) else { return nil }
        return Double(parts[0])
    }
}
