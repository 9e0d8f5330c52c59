/// Text written into XML (XMP packets and sidecars): the five markup characters escaped,
/// and what XML 1.0 forbids dropped (C0 controls but tab, line feed and carriage return;
/// U+FFFE and U+FFFF), so that no label, keyword or camera string can make a packet
/// ill-formed or add markup of its own.
public enum XMLText {
    /// `text` as XML character data or an attribute value (either quote).
    public static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                if isAllowed(scalar) { out.unicodeScalars.append(scalar) }
            }
        }
        return out
    }

    /// Whether XML 1.0 allows `scalar` in a document (its `Char` production).
    public static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A, 0x0D: return true
        case 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: return true
        default: return false
        }
    }
}
