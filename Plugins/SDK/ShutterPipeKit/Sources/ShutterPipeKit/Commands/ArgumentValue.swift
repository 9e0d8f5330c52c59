/// A type an option or argument can hold, read from one command-line word.
public protocol ExpressibleByArgument: Sendable {
    /// Reads a value, or `nil` when the word is not one.
    init?(argument: String)
    /// What a valid word looks like, for errors: "a duration such as 500ms or 2s".
    static var expectation: String { get }
    /// The words accepted, for help; empty when any.
    static var allValueStrings: [String] { get }
    /// The value as the help shows a default: "90s", "human".
    var argumentDescription: String { get }
}

extension ExpressibleByArgument {
    /// Any word.
    public static var allValueStrings: [String] { [] }
    /// The value as text.
    public var argumentDescription: String { "\(self)" }
}

extension ExpressibleByArgument where Self: RawRepresentable, Self.RawValue == String, Self: CaseIterable {
    /// A case by its raw value.
    public init?(argument: String) { self.init(rawValue: argument) }
    /// "one of human, json".
    public static var expectation: String { "one of \(allValueStrings.joined(separator: ", "))" }
    /// Every case's raw value.
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
    /// The raw value.
    public var argumentDescription: String { rawValue }
}

extension String: ExpressibleByArgument {
    /// The word itself.
    public init?(argument: String) { self = argument }
    /// Any text.
    public static var expectation: String { "text" }
}

extension Int: ExpressibleByArgument {
    /// A whole number.
    public init?(argument: String) { self.init(argument, radix: 10) }
    /// "a whole number".
    public static var expectation: String { "a whole number" }
}

extension Duration: ExpressibleByArgument {
    /// `500ms`, `2s`, `1.5s`, `2m`, `1h`, or a bare number of seconds.
    public init?(argument: String) {
        guard let duration = PluginOptions.parseDuration(argument) else { return nil }
        self = duration
    }
    /// "a duration such as 500ms, 2s or 1m".
    public static var expectation: String { "a duration such as 500ms, 2s or 1m" }
    /// "90s", "250ms".
    public var argumentDescription: String {
        let milliseconds = components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000)s" : "\(milliseconds)ms"
    }
}
