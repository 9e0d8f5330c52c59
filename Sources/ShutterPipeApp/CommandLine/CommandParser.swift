import ShutterPipeKit

/// One option, flag or argument a command declared, with the names the parser and the
/// help use for it.
struct DeclaredArgument {
    let slot: any ArgumentSlot
    let definition: ArgumentDefinition
    /// The long name (`log-format`), for options and flags.
    let long: String
    /// How errors and the usage name it: `--log-format`, or `EVENT` for a positional.
    let display: String
    /// The value's name in the usage: `FORMAT`.
    let valueName: String

    /// The declarations of `command`, in the order of its properties; those of an
    /// `@OptionGroup` in the group's place.
    static func all(in command: any ParsableCommand) -> [DeclaredArgument] {
        declarations(of: command)
    }

    private static func declarations(of value: Any) -> [DeclaredArgument] {
        Mirror(reflecting: value).children.flatMap { child -> [DeclaredArgument] in
            if let group = child.value as? any ArgumentGroupSlot { return declarations(of: group.arguments) }
            guard let label = child.label, let slot = child.value as? any ArgumentSlot else { return [] }
            let property = label.hasPrefix("_") ? String(label.dropFirst()) : label
            let definition = slot.definition
            let long = definition.name ?? kebabCase(property)
            let valueName = definition.valueName ?? long.uppercased().replacingOccurrences(of: "-", with: "_")
            let display = definition.kind == .positional ? valueName : "--\(long)"
            return [DeclaredArgument(slot: slot, definition: definition, long: long, display: display, valueName: valueName)]
        }
    }

    /// `logFormat` → `log-format`.
    static func kebabCase(_ name: String) -> String {
        var out = ""
        for character in name {
            if character.isUppercase {
                if !out.isEmpty { out += "-" }
                out += character.lowercased()
            } else {
                out.append(character)
            }
        }
        return out
    }
}

/// Reads a command line into a command, from the command's own declarations: the
/// swift-argument-parser way, written by hand since no package can be fetched.
enum CommandParser {
    /// Whether the words ask for help (`-h` or `--help` before any `--`).
    static func asksForHelp(_ words: [String]) -> Bool {
        for word in words {
            if word == "--" { return false }
            if word == "-h" || word == "--help" { return true }
        }
        return false
    }

    /// A command of type `type` with `words` applied.
    static func parse(_ type: any ParsableCommand.Type, _ words: [String]) throws(UsageError) -> any ParsableCommand {
        let command = type.init()
        let declared = DeclaredArgument.all(in: command)
        // A name declared twice (by the command and a group it uses, say) could never
        // reach the second declaration: a mistake of the command's, said by name.
        let named = declared.filter { $0.definition.kind != .positional }.map(\.display)
        if let twice = named.first(where: { name in named.filter { $0 == name }.count > 1 }) {
            throw UsageError("the command '\(type.configuration.commandName)' declares \(twice) twice (itself and an option group, say); its plugin must name one of them otherwise")
        }
        var given: [Int: [String]] = [:]
        var positionals: [String] = []
        var onlyPositionals = false
        var index = 0
        while index < words.count {
            let word = words[index]
            index += 1
            if onlyPositionals || !word.hasPrefix("-") || word == "-" {
                positionals.append(word)
                continue
            }
            if word == "--" { onlyPositionals = true; continue }
            var name = word
            var inline: String?
            if let equals = word.firstIndex(of: "=") {
                name = String(word[..<equals])
                inline = String(word[word.index(after: equals)...])
            }
            guard let found = find(name, in: declared) else {
                var message = "unknown option '\(name)'"
                let known = declared.filter { $0.definition.kind != .positional }.map(\.display)
                if let suggestion = closestMatch(to: name, in: known) { message += "; did you mean '\(suggestion)'?" }
                throw UsageError(message)
            }
            let argument = declared[found]
            switch argument.definition.kind {
            case .flag:
                guard inline == nil else { throw UsageError("option '\(argument.display)' takes no value") }
                given[found, default: []].append("true")
            case .option:
                if let inline {
                    given[found, default: []].append(inline)
                } else {
                    guard index < words.count else { throw UsageError("option '\(argument.display)' needs a value (\(argument.valueName))") }
                    given[found, default: []].append(words[index])
                    index += 1
                }
            case .positional:
                preconditionFailure("positionals are never found by name")
            @unknown default:
                throw UsageError("option '\(argument.display)' is of a kind this shutterpipe does not know: its command is newer; update shutterpipe")
            }
        }
        for (position, argument) in declared.enumerated() where argument.definition.kind == .positional {
            if argument.definition.repeats {
                given[position] = positionals
                positionals = []
            } else if !positionals.isEmpty {
                given[position] = [positionals.removeFirst()]
            } else if argument.definition.required {
                throw UsageError("missing \(argument.display): \(argument.definition.help)")
            }
        }
        if let extra = positionals.first { throw UsageError("unexpected argument '\(extra)'") }
        for (position, words) in given {
            try declared[position].slot.assign(words, as: declared[position].display)
        }
        return command
    }

    private static func find(_ name: String, in declared: [DeclaredArgument]) -> Int? {
        declared.firstIndex { argument in
            guard argument.definition.kind != .positional else { return false }
            if name == "--\(argument.long)" { return true }
            if let short = argument.definition.short, name == "-\(short)" { return true }
            return false
        }
    }
}
