import CYAML
import Foundation
import ShutterPipeKit

/// Reads YAML through libyaml into ``ConfigNode`` trees with file, line and column on
/// every node, and expands `${VAR}` / `${VAR:-default}` in scalar values.
public enum YAMLLoader {
    /// Reads and parses a config file.
    public static func load(file path: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> ConfigNode {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "it cannot be read (check its permissions)" : "no such file"
            throw ConfigError("cannot open config '\(path)': \(reason)", at: nil)
        }
        return try parse(Array(data), file: path, environment: environment)
    }

    /// Parses YAML text. `file` names it in locations.
    public static func parse(_ text: String, file: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> ConfigNode {
        try parse(Array(text.utf8), file: file, environment: environment)
    }

    /// Parses YAML bytes. `file` names them in locations.
    public static func parse(_ bytes: [UInt8], file: String, environment: [String: String]) throws -> ConfigNode {
        try bytes.withUnsafeBufferPointer { buffer in
            var parser = yaml_parser_t()
            guard yaml_parser_initialize(&parser) == 1 else {
                throw ConfigError("\(file): libyaml could not start (out of memory)", at: nil)
            }
            defer { yaml_parser_delete(&parser) }
            yaml_parser_set_input_string(&parser, buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!, buffer.count)
            var builder = TreeBuilder(file: file, environment: environment)
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else {
                    throw syntaxError(parser, file: file)
                }
                defer { yaml_event_delete(&event) }
                if try builder.consume(event) { break }
            }
            guard let root = builder.root else {
                throw ConfigError("\(file) is empty; a config needs at least 'version: 1', 'backend', 'triggers' and 'sinks'",
                                  at: SourceLocation(file: file, line: 1, column: 1))
            }
            return root
        }
    }

    private static func syntaxError(_ parser: yaml_parser_t, file: String) -> ConfigError {
        let problem = parser.problem.map { String(cString: $0) } ?? "unreadable YAML"
        let mark = parser.problem_mark
        var message = "YAML syntax error: \(problem)"
        if let context = parser.context.map({ String(cString: $0) }) {
            message += " (\(context) at line \(parser.context_mark.line + 1), column \(parser.context_mark.column + 1))"
        }
        if problem.contains("tab") || problem.contains("found character that cannot start any token") {
            message += "; indent with spaces, not tabs"
        }
        return ConfigError(message, at: SourceLocation(file: file, line: Int(mark.line) + 1, column: Int(mark.column) + 1))
    }
}

/// Turns libyaml's event stream into nodes, with an explicit stack (no recursion, so
/// deeply nested input cannot exhaust the call stack).
private struct TreeBuilder {
    private enum Frame {
        case sequence(items: [ConfigNode], location: SourceLocation, anchor: String?)
        case mapping(entries: [ConfigEntry], pendingKey: (String, SourceLocation)?, location: SourceLocation, anchor: String?)
    }

    let file: String
    let environment: [String: String]
    private(set) var root: ConfigNode?
    private var stack: [Frame] = []
    private var anchors: [String: ConfigNode] = [:]
    private var documents = 0
    private static let maximumDepth = 64

    init(file: String, environment: [String: String]) {
        self.file = file
        self.environment = environment
    }

    /// Returns true at the end of the stream.
    mutating func consume(_ event: yaml_event_t) throws -> Bool {
        let location = SourceLocation(file: file, line: Int(event.start_mark.line) + 1, column: Int(event.start_mark.column) + 1)
        switch event.type {
        case YAML_STREAM_END_EVENT:
            return true
        case YAML_DOCUMENT_START_EVENT:
            documents += 1
            if documents > 1 {
                throw ConfigError("a config file holds one YAML document; remove the second '---'", at: location)
            }
        case YAML_SCALAR_EVENT:
            let scalar = event.data.scalar
            let text = string(scalar.value, length: scalar.length)
            let quoted = scalar.style != YAML_PLAIN_SCALAR_STYLE && scalar.style != YAML_ANY_SCALAR_STYLE
            try add(ConfigNode(.scalar(text, quoted: quoted), at: location), anchor: scalar.anchor.map { String(cString: $0) })
        case YAML_SEQUENCE_START_EVENT:
            try push(.sequence(items: [], location: location, anchor: event.data.sequence_start.anchor.map { String(cString: $0) }), at: location)
        case YAML_MAPPING_START_EVENT:
            try push(.mapping(entries: [], pendingKey: nil, location: location, anchor: event.data.mapping_start.anchor.map { String(cString: $0) }), at: location)
        case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
            guard let frame = stack.popLast() else { break }
            switch frame {
            case .sequence(let items, let start, let anchor):
                try add(ConfigNode(.sequence(items), at: start), anchor: anchor)
            case .mapping(let entries, _, let start, let anchor):
                try add(ConfigNode(.mapping(entries), at: start), anchor: anchor)
            }
        case YAML_ALIAS_EVENT:
            let name = String(cString: event.data.alias.anchor)
            guard let node = anchors[name] else {
                throw ConfigError("unknown alias '*\(name)'; define '&\(name)' before using it", at: location)
            }
            try add(node, anchor: nil)
        default:
            break
        }
        return false
    }

    private mutating func push(_ frame: Frame, at location: SourceLocation) throws {
        if case .mapping(_, nil, _, _)? = stack.last {
            throw ConfigError("a map key must be plain text, not a list or map", at: location)
        }
        guard stack.count < Self.maximumDepth else {
            throw ConfigError("nesting deeper than \(Self.maximumDepth) levels", at: location)
        }
        stack.append(frame)
    }

    private mutating func add(_ node: ConfigNode, anchor: String?) throws {
        if let anchor { anchors[anchor] = node }
        guard let top = stack.popLast() else {
            root = node
            return
        }
        switch top {
        case .sequence(var items, let location, let anchor):
            items.append(try expanded(node))
            stack.append(.sequence(items: items, location: location, anchor: anchor))
        case .mapping(var entries, let pendingKey, let location, let anchor):
            if let (key, keyLocation) = pendingKey {
                entries.append(ConfigEntry(key: key, keyLocation: keyLocation, value: try expanded(node)))
                stack.append(.mapping(entries: entries, pendingKey: nil, location: location, anchor: anchor))
            } else {
                guard case .scalar(let key, _) = node.value else {
                    throw ConfigError("a map key must be plain text, not \(node.kindDescription)", at: node.location)
                }
                if let first = entries.first(where: { $0.key == key }) {
                    throw ConfigError("duplicate key '\(key)' (first at line \(first.keyLocation.line), column \(first.keyLocation.column))", at: node.location)
                }
                stack.append(.mapping(entries: entries, pendingKey: (key, node.location), location: location, anchor: anchor))
            }
        }
    }

    /// Expands `${VAR}` and `${VAR:-default}` in a scalar value.
    private func expanded(_ node: ConfigNode) throws -> ConfigNode {
        guard case .scalar(let text, let quoted) = node.value, text.contains("${") else { return node }
        var result = ""
        var rest = Substring(text)
        while let start = rest.range(of: "${") {
            result += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                throw ConfigError("'${' without a closing '}' in '\(text)'", at: node.location)
            }
            let body = rest[start.upperBound..<end]
            let (name, fallback): (Substring, Substring?) = {
                if let separator = body.range(of: ":-") { return (body[..<separator.lowerBound], body[separator.upperBound...]) }
                return (body, nil)
            }()
            guard !name.isEmpty, name.allSatisfy({ $0 == "_" || $0.isLetter || $0.isNumber }) else {
                throw ConfigError("'${\(body)}' is not a variable reference; names are letters, digits and '_'", at: node.location)
            }
            if let value = environment[String(name)], !value.isEmpty {
                result += value
            } else if let fallback {
                result += fallback
            } else {
                throw ConfigError("environment variable '\(name)' is not set; set it, or write '${\(name):-default}'", at: node.location)
            }
            rest = rest[rest.index(after: end)...]
        }
        result += rest
        return ConfigNode(.scalar(result, quoted: quoted), at: node.location)
    }

    private func string(_ pointer: UnsafeMutablePointer<yaml_char_t>?, length: Int) -> String {
        guard let pointer else { return "" }
        return String(decoding: UnsafeBufferPointer(start: pointer, count: length), as: UTF8.self)
    }
}
