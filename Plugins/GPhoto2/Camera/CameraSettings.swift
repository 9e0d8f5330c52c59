import Foundation

/// Matching a config value to a camera's own choices.
///
/// Config keys have friendly names with the usual libgphoto2 widget names behind them
/// (`aperture` is `aperture` on Canon and `f-number` on generic PTP cameras). Values match
/// a choice exactly (case-insensitive), or by number: `1/125` matches `0.0080s`, `8`
/// matches `f/8`, `200` matches `ISO 200`.
enum CameraSettings {
    /// Widget names to try for a config key, in order.
    static func widgetNames(for key: String) -> [String] {
        switch key.lowercased() {
        case "iso": return ["iso", "isospeed"]
        case "shutterspeed": return ["shutterspeed", "shutterspeed2", "exptime"]
        case "aperture": return ["aperture", "f-number", "fnumber"]
        case "imageformat": return ["imageformat", "imagequality"]
        case "capturetarget": return ["capturetarget"]
        default: return [key]
        }
    }

    /// The choice `value` names, if any.
    static func choice(matching value: String, in choices: [String]) -> String? {
        let wanted = value.trimmingCharacters(in: .whitespaces)
        if let exact = choices.first(where: { $0.caseInsensitiveCompare(wanted) == .orderedSame }) { return exact }
        guard let number = Self.number(in: wanted) else { return nil }
        return choices.first { choice in
            guard let candidate = Self.number(in: choice) else { return false }
            return abs(candidate - number) <= max(abs(number), 1e-9) * 0.01
        }
    }

    /// The number a setting text stands for: `1/125` → 0.008, `0.0080s` → 0.008, `f/5.6` →
    /// 5.6, `ISO 200` → 200.
    static func number(in text: String) -> Double? {
        var cleaned = text.lowercased()
        for noise in ["iso", "f/", "sec", "s"] { cleaned = cleaned.replacingOccurrences(of: noise, with: "") }
        cleaned = cleaned.trimmingCharacters(in: .whitespaces)
        if let slash = cleaned.firstIndex(of: "/") {
            guard let numerator = Double(cleaned[..<slash]), let denominator = Double(cleaned[cleaned.index(after: slash)...]),
                  denominator != 0 else { return nil }
            return numerator / denominator
        }
        return Double(cleaned)
    }
}
