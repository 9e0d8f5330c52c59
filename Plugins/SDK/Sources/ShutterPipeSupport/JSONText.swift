import Foundation

/// JSON text of plain values (dictionaries, arrays, strings, numbers, booleans,
/// `NSNull`), keys sorted, slashes as they are. Foundation's `JSONSerialization` on Linux
/// takes about 1 ms per object of a dozen keys: 100 ms for a page of 100 shots, where
/// this takes a few.
public enum JSONText {
    /// `value` as JSON, UTF-8.
    public static func data(_ value: Any) -> Data {
        var out = ""
        out.reserveCapacity(4096)
        write(value, to: &out)
        return Data(out.utf8)
    }

    private static func write(_ value: Any, to out: inout String) {
        // Containers first: a failed cast of a Swift dictionary or array to a scalar type
        // bridges it (and all it holds) to Foundation's classes to look, which cost a page
        // of 100 shots with their frames 50 ms; these casts never do.
        switch value {
        case let object as [String: Any]:
            out += "{"
            for (index, key) in object.keys.sorted().enumerated() {
                if index > 0 { out += "," }
                string(key, to: &out)
                out += ":"
                write(object[key]!, to: &out)
            }
            out += "}"
        case let array as [Any]:
            out += "["
            for (index, item) in array.enumerated() {
                if index > 0 { out += "," }
                write(item, to: &out)
            }
            out += "]"
        case let text as String: string(text, to: &out)
        case let flag as Bool: out += flag ? "true" : "false"
        case let number as Int: out += String(number)
        case let number as Int64: out += String(number)
        case let number as UInt16: out += String(number)
        case let number as UInt64: out += String(number)
        case let number as Double: out += number.isFinite ? (number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)) : "null"
        case is NSNull: out += "null"
        case let number as NSNumber: out += number.stringValue
        default: string("\(value)", to: &out)
        }
    }

    /// Appends `text` as a JSON string literal.
    public static func string(_ text: String, to out: inout String) {
        out += "\""
        var plain = true
        for unit in text.utf8 where unit < 0x20 || unit == 0x22 || unit == 0x5C || unit == 0xE2 { plain = false; break }
        if plain {
            out += text
            out += "\""
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x2028 || scalar.value == 0x2029:
                out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
