/// Text from outside (an MQTT event name, a socket line, a camera's answer, a Host header)
/// made safe for a terminal and a log read line by line: control characters are written
/// as escapes, so a newline cannot forge a second record and an escape sequence cannot
/// repaint the screen. JSON logs escape them by construction.
public enum LogText {
    /// `text` with every control character (C0 but tab, DEL, C1) as `\n`, `\r` or `\xHH`
    /// (`\u{HHHH}` above FF), and backslashes as they are.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case _ where isControl(scalar):
                let hex = String(scalar.value, radix: 16)
                result += scalar.value <= 0xFF ? "\\x" + (hex.count < 2 ? "0" + hex : hex) : "\\u{\(hex)}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return (value < 0x20 && value != 0x09) || (value >= 0x7F && value <= 0x9F) || value == 0x2028 || value == 0x2029
    }
}
