import ShutterPipeKit

/// Usage lines and help pages, generated from the commands' declarations so they never
/// drift from what the parser accepts.
enum CommandHelp {
    /// `Usage: shutterpipe run [--config FILE] … [FILE...]`.
    static func usage(_ type: any ParsableCommand.Type) -> String {
        let declared = DeclaredArgument.all(in: type.init())
        var parts = ["Usage: shutterpipe \(type.configuration.commandName)"]
        for argument in declared {
            let definition = argument.definition
            switch definition.kind {
            case .flag:
                parts.append("[\(argument.display)]")
            case .option:
                parts.append("[\(argument.display) \(argument.valueName)]" + (definition.repeats ? "..." : ""))
            case .positional:
                let word = argument.valueName + (definition.repeats ? "..." : "")
                parts.append(definition.required ? word : "[\(word)]")
            @unknown default:
                parts.append("[\(argument.display) …]")  // a kind newer than this shutterpipe
            }
        }
        return parts.joined(separator: " ")
    }

    /// The whole help of one command: usage, what it does, every option.
    static func help(_ type: any ParsableCommand.Type) -> String {
        let configuration = type.configuration
        var text = usage(type) + "\n\n" + sentence(configuration.abstract)
        if !configuration.discussion.isEmpty { text += "\n\n" + configuration.discussion }
        let declared = DeclaredArgument.all(in: type.init())
        var rows: [(String, String)] = []
        for argument in declared {
            let definition = argument.definition
            var left: String
            switch definition.kind {
            case .positional: left = argument.valueName
            case .flag: left = argument.display
            case .option: left = "\(argument.display) \(argument.valueName)"
            @unknown default: left = "\(argument.display) …"
            }
            if let short = definition.short { left = "-\(short), " + left }
            var notes: [String] = []
            if !definition.choices.isEmpty { notes.append("one of \(definition.choices.joined(separator: ", "))") }
            if let value = definition.defaultDescription { notes.append("default: \(value)") }
            if definition.repeats && definition.kind == .option { notes.append("may be given more than once") }
            let right = definition.help + (notes.isEmpty ? "" : " (\(notes.joined(separator: "; ")))")
            rows.append((left, right))
        }
        rows.append(("-h, --help", "show this help"))
        let arguments = rows.filter { row in declared.contains { $0.definition.kind == .positional && $0.valueName == row.0 } }
        let options = rows.filter { row in !arguments.contains { $0.0 == row.0 } }
        if !arguments.isEmpty { text += "\n\nArguments:\n" + table(arguments) }
        text += "\n\nOptions:\n" + table(options)
        return text
    }

    /// Two columns, the left one padded.
    static func table(_ rows: [(String, String)]) -> String {
        let width = min(28, (rows.map(\.0.count).max() ?? 0) + 2)
        return rows.map { left, right in
            let padded = left.count >= width ? left + "  " : left.padding(toLength: width, withPad: " ", startingAt: 0)
            return "  " + padded + right
        }.joined(separator: "\n")
    }

    private static func sentence(_ abstract: String) -> String {
        guard let first = abstract.first else { return abstract }
        return first.uppercased() + abstract.dropFirst() + (abstract.hasSuffix(".") ? "" : ".")
    }
}
