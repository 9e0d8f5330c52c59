import Synchronization

/// How the host sees one declared option, flag or positional argument: what it parses
/// and what the help says.
public struct ArgumentDefinition: Sendable, Equatable {
    /// What kind of thing it is on the command line. It may grow (contract 10 on).
    public enum Kind: Sendable, Equatable {
        /// `--name VALUE`.
        case option
        /// `--name`, no value.
        case flag
        /// A word in its place.
        case positional
    }

    /// What kind it is.
    public var kind: Kind
    /// The long name without dashes; `nil` takes it from the property (`logFormat` is
    /// `log-format`).
    public var name: String?
    /// A one-letter name (`-c`).
    public var short: Character?
    /// The value's name in the usage (`FILE`); `nil` takes the name in capitals.
    public var valueName: String?
    /// One line of help.
    public var help: String
    /// Whether it may be given more than once (an option), or take the rest of the words
    /// (a positional argument).
    public var repeats: Bool
    /// Whether it must be given.
    public var required: Bool
    /// The default, as the help shows it; `nil` for none.
    public var defaultDescription: String?
    /// The words accepted; empty when any.
    public var choices: [String]
}

/// A declared option, flag or argument, as the host's parser finds it (with Mirror) on
/// a command. Plugin authors use the property wrappers and never this protocol.
public protocol ArgumentSlot {
    /// What it is.
    var definition: ArgumentDefinition { get }
    /// Takes the words the command line gave it, in order (for a flag, one per time it
    /// was given); `display` names it in errors (`--timeout`).
    func assign(_ words: [String], as display: String) throws(UsageError)
}

/// Where a wrapper keeps its value: the command's copy and the one the parser found
/// share it.
final class ArgumentBox<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    var current: Value { value.withLock { $0 } }
    func set(_ newValue: Value) { value.withLock { $0 = newValue } }
}

func parseArgument<T: ExpressibleByArgument>(_ word: String, as display: String) throws(UsageError) -> T {
    guard let value = T(argument: word) else { throw UsageError("\(display) must be \(T.expectation); got '\(word)'") }
    return value
}

func parseArguments<T: ExpressibleByArgument>(_ words: [String], as display: String) throws(UsageError) -> [T] {
    var values: [T] = []
    for word in words { values.append(try parseArgument(word, as: display)) }
    return values
}

/// An option with a value: `--config FILE`.
@propertyWrapper
public struct Option<Value: Sendable>: Sendable, ArgumentSlot {
    private let box: ArgumentBox<Value>
    private let read: @Sendable ([String], String) throws(UsageError) -> Value
    /// What it is.
    public let definition: ArgumentDefinition

    /// The value given, or the default.
    public var wrappedValue: Value { box.current }

    /// Takes the words given for it.
    public func assign(_ words: [String], as display: String) throws(UsageError) {
        guard !words.isEmpty else { return }
        box.set(try read(words, display))
    }

    /// An option with a default; given twice, the last one counts.
    public init(wrappedValue: Value, name: String? = nil, short: Character? = nil, valueName: String? = nil, help: String)
    where Value: ExpressibleByArgument {
        box = ArgumentBox(wrappedValue)
        read = { words, display throws(UsageError) in try parseArgument(words[words.count - 1], as: display) }
        definition = ArgumentDefinition(kind: .option, name: name, short: short, valueName: valueName, help: help, repeats: false,
                                        required: false, defaultDescription: wrappedValue.argumentDescription, choices: Value.allValueStrings)
    }

    /// An option without a default: `nil` when not given.
    public init<Wrapped: ExpressibleByArgument>(name: String? = nil, short: Character? = nil, valueName: String? = nil, help: String)
    where Value == Wrapped? {
        box = ArgumentBox(nil)
        read = { words, display throws(UsageError) in .some(try parseArgument(words[words.count - 1], as: display) as Wrapped) }
        definition = ArgumentDefinition(kind: .option, name: name, short: short, valueName: valueName, help: help, repeats: false,
                                        required: false, defaultDescription: nil, choices: Wrapped.allValueStrings)
    }

    /// An option that may be given any number of times; every value counts, in order.
    public init<Element: ExpressibleByArgument>(wrappedValue: [Element] = [], name: String? = nil, short: Character? = nil,
                                                valueName: String? = nil, help: String)
    where Value == [Element] {
        box = ArgumentBox(wrappedValue)
        read = { words, display throws(UsageError) in try parseArguments(words, as: display) }
        definition = ArgumentDefinition(kind: .option, name: name, short: short, valueName: valueName, help: help, repeats: true,
                                        required: false, defaultDescription: nil, choices: Element.allValueStrings)
    }
}

/// A switch without a value: `--verbose`.
@propertyWrapper
public struct Flag: Sendable, ArgumentSlot {
    private let box: ArgumentBox<Bool>
    /// What it is.
    public let definition: ArgumentDefinition

    /// Whether it was given.
    public var wrappedValue: Bool { box.current }

    /// Takes the times it was given.
    public func assign(_ words: [String], as display: String) throws(UsageError) {
        if !words.isEmpty { box.set(true) }
    }

    /// A flag, off unless given.
    public init(wrappedValue: Bool = false, name: String? = nil, short: Character? = nil, help: String) {
        box = ArgumentBox(wrappedValue)
        definition = ArgumentDefinition(kind: .flag, name: name, short: short, valueName: nil, help: help, repeats: false,
                                        required: false, defaultDescription: nil, choices: [])
    }
}

/// A positional argument: `shutterpipe trigger capture`.
@propertyWrapper
public struct Argument<Value: Sendable>: Sendable, ArgumentSlot {
    private let box: ArgumentBox<Value?>
    private let read: @Sendable ([String], String) throws(UsageError) -> Value
    /// What it is.
    public let definition: ArgumentDefinition

    /// The value given (the host checks that a required one was).
    public var wrappedValue: Value { box.current! }

    /// Takes the words given for it.
    public func assign(_ words: [String], as display: String) throws(UsageError) {
        guard !words.isEmpty else { return }
        box.set(try read(words, display))
    }

    /// A required argument.
    public init(valueName: String? = nil, help: String) where Value: ExpressibleByArgument {
        box = ArgumentBox(nil)
        read = { words, display throws(UsageError) in try parseArgument(words[0], as: display) }
        definition = ArgumentDefinition(kind: .positional, name: nil, short: nil, valueName: valueName, help: help, repeats: false,
                                        required: true, defaultDescription: nil, choices: Value.allValueStrings)
    }

    /// An argument that takes every remaining word.
    public init<Element: ExpressibleByArgument>(wrappedValue: [Element] = [], valueName: String? = nil, help: String)
    where Value == [Element] {
        box = ArgumentBox(wrappedValue)
        read = { words, display throws(UsageError) in try parseArguments(words, as: display) }
        definition = ArgumentDefinition(kind: .positional, name: nil, short: nil, valueName: valueName, help: help, repeats: true,
                                        required: false, defaultDescription: nil, choices: Element.allValueStrings)
    }
}

/// Options declared once and used by several commands (added in contract 10.2): a type
/// whose properties are `@Option`, `@Flag` or `@Argument`, put in a command with
/// `@OptionGroup`. Its declarations parse and show in the help as if the command had
/// declared them itself, in the group's place.
///
/// ```swift
/// struct CameraChoice: ParsableArguments {
///     @Option(valueName: "PORT", help: "the camera's port") var port: String?
///     @Option(valueName: "MODEL", help: "the camera's model") var model: String?
/// }
/// struct Settings: ParsableCommand {
///     @OptionGroup var camera: CameraChoice
///     …
/// }
/// ```
public protocol ParsableArguments: Sendable {
    /// Every declaration at its default.
    init()
}

/// How the host's parser finds the declarations inside an `@OptionGroup` (with Mirror).
/// Plugin authors use the property wrapper and never this protocol.
public protocol ArgumentGroupSlot {
    /// The group's value, whose properties are the declarations.
    var arguments: any ParsableArguments { get }
}

/// A group of options declared once (``ParsableArguments``), used in a command.
@propertyWrapper
public struct OptionGroup<Value: ParsableArguments>: Sendable, ArgumentGroupSlot {
    /// The group: its options read what the command line gave them.
    public let wrappedValue: Value

    /// The group's value, for the parser.
    public var arguments: any ParsableArguments { wrappedValue }

    public init() {
        wrappedValue = Value()
    }
}
