/// A command-line mistake; printed with the command's usage, exit code 2.
public struct UsageError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public var description: String
    init(_ description: String) { self.description = description }
}

/// Parsed command-line arguments: options with values, flags, and positionals.
struct Arguments {
    /// The options a command accepts: names (without dashes) that take a value, and flags.
    struct Spec {
        var valued: [String: String] = [:]  // long name → short name ("" for none)
        var flags: [String: String] = [:]
    }

    private(set) var values: [String: String] = [:]
    private(set) var repeated: [String: [String]] = [:]

    /// Every value given for a repeatable option, in order.
    func allValues(_ name: String) -> [String] { repeated[name] ?? [] }
    private(set) var flags: Set<String> = []
    private(set) var positionals: [String] = []

    init(_ arguments: [String], spec: Spec) throws(UsageError) {
        var index = 0
        var onlyPositionals = false
        func longName(for token: String) -> String? {
            if token.hasPrefix("--") { return String(token.dropFirst(2)) }
            let short = String(token.dropFirst())
            return (spec.valued.first { $0.value == short } ?? spec.flags.first { $0.value == short })?.key
        }
        while index < arguments.count {
            let token = arguments[index]
            index += 1
            if onlyPositionals || !token.hasPrefix("-") || token == "-" {
                positionals.append(token)
                continue
            }
            if token == "--" { onlyPositionals = true; continue }
            var inlineValue: String?
            var name = token
            if let equals = token.firstIndex(of: "=") {
                inlineValue = String(token[token.index(after: equals)...])
                name = String(token[..<equals])
            }
            guard let long = longName(for: name) else { throw UsageError("unknown option '\(name)'") }
            if spec.valued[long] != nil {
                if let inlineValue {
                    values[long] = inlineValue
                } else {
                    guard index < arguments.count else { throw UsageError("option '--\(long)' needs a value") }
                    values[long] = arguments[index]
                    index += 1
                }
                repeated[long, default: []].append(values[long]!)
            } else if spec.flags[long] != nil {
                guard inlineValue == nil else { throw UsageError("option '--\(long)' takes no value") }
                flags.insert(long)
            } else {
                throw UsageError("unknown option '\(name)'")
            }
        }
    }
}
