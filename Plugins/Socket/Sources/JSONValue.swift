import ShutterPipeKit

/// Any JSON value, for the parts of a message that a client chooses freely (the `id` it
/// wants echoed back): it comes back exactly as it was sent.
public enum JSONValue: Codable, Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Decodes whatever JSON value is there.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Int64.self) { self = .integer(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([JSONValue].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }

    /// Encodes the value as it was.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The text, for a string value.
    public var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The text of a string, number or boolean (`400`, `true`); `nil` for the rest.
    public var scalarText: String? {
        switch self {
        case .string(let text): return text
        case .integer(let number): return String(number)
        case .number(let number): return SettingRange.text(number)
        case .bool(let value): return value ? "1" : "0"
        case .null, .array, .object: return nil
        }
    }
}
