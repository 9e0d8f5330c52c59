/// A place in a config file: file, line and column, counted from 1.
public struct SourceLocation: Sendable, Hashable, CustomStringConvertible {
    /// The file as the user named it.
    public var file: String
    /// The line, from 1.
    public var line: Int
    /// The column, from 1.
    public var column: Int

    /// Creates a location.
    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    /// `file:line:column`, the form editors and compilers use.
    public var description: String { "\(file):\(line):\(column)" }
}

/// One node of a parsed config document, with where it came from.
///
/// The YAML loader builds these; plugins read them through ``PluginOptions``.
public struct ConfigNode: Sendable {
    /// The shape of a node. Closed (`@frozen`): YAML has these three and no other.
    @frozen public enum Value: Sendable {
        /// A scalar, as text. `quoted` is true for `'…'`/`"…"` scalars, which are
        /// never null.
        case scalar(String, quoted: Bool)
        /// A list.
        case sequence([ConfigNode])
        /// A map, in document order.
        case mapping([ConfigEntry])
    }

    /// The value.
    public var value: Value
    /// Where the node starts.
    public var location: SourceLocation

    /// Creates a node.
    public init(_ value: Value, at location: SourceLocation) {
        self.value = value
        self.location = location
    }

    /// True for an empty plain scalar, `~` and `null`.
    public var isNull: Bool {
        if case .scalar(let text, let quoted) = value, !quoted {
            return text.isEmpty || text == "~" || text == "null" || text == "Null" || text == "NULL"
        }
        return false
    }

    /// What kind of node this is, for messages: "a string", "a list", "a map".
    public var kindDescription: String {
        switch value {
        case .scalar: return isNull ? "nothing (null)" : "a scalar"
        case .sequence: return "a list"
        case .mapping: return "a map"
        }
    }
}

/// One key and value of a map node.
public struct ConfigEntry: Sendable {
    /// The key.
    public var key: String
    /// Where the key is.
    public var keyLocation: SourceLocation
    /// The value.
    public var value: ConfigNode

    /// Creates an entry.
    public init(key: String, keyLocation: SourceLocation, value: ConfigNode) {
        self.key = key
        self.keyLocation = keyLocation
        self.value = value
    }
}
