import Foundation
import ShutterPipeKit

/// A template with placeholders, for paths (`{session}/{session}-{seq:04}.{ext}`) and
/// for EXIF values (`© {date} Jane Doe`).
///
/// Placeholders: `{session}`, `{seq}`, `{shot}`, `{date}` (2026-12-01), `{time}`
/// (143005), `{camera}`, `{name}` (the camera's file-name stem), `{ext}` (the camera's
/// extension, lower case), `{trigger}`, `{uuid}` (32 hex digits, new for every photo),
/// `{cameraseq}` (the camera's own counter), `{capturetime}` (the camera's clock),
/// `{label}` (the session label, `nolabel` without one), `{serial}` (the body's serial,
/// `unknown` where the backend has none).
/// `{seq}` and `{shot}` take a zero-padded width: `{seq:04}`. In paths, values are made
/// safe: no `/`, no NUL or control characters, never `.`, `..` or `~`, at most 100 UTF-8 bytes; a
/// path component is cut to 240 bytes, keeping its extension.
public struct PlaceholderTemplate: Sendable, Equatable {
    /// The placeholders a template may use.
    public static let placeholders = ["session", "seq", "cameraseq", "shot", "date", "time", "capturetime", "camera", "name", "ext", "trigger", "uuid",
                                      "label", "serial", "sequence", "frame", "ev", "focusstep", "angle"]

    enum Part: Sendable, Equatable {
        case literal(String)
        case placeholder(String, width: Int)
    }

    let parts: [Part]
    /// The template as written.
    public let text: String

    /// Parses a template; the error message says what is wrong.
    public init(_ text: String) throws(TemplateError) {
        var parts: [Part] = []
        var literal = ""
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if character == "}" { throw TemplateError("'}' without '{' in '\(text)'") }
            guard character == "{" else {
                literal.append(character)
                index = text.index(after: index)
                continue
            }
            guard let close = text[index...].firstIndex(of: "}") else {
                throw TemplateError("'{' without '}' in '\(text)'")
            }
            let body = text[text.index(after: index)..<close]
            let pieces = body.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(pieces[0])
            guard Self.placeholders.contains(name) else {
                var message = "unknown placeholder '{\(body)}'"
                if let suggestion = closestMatch(to: name, in: Self.placeholders) { message += "; did you mean '{\(suggestion)}'?" }
                throw TemplateError(message + "; known: " + Self.placeholders.map { "{\($0)}" }.joined(separator: ", "))
            }
            var width = 0
            if pieces.count == 2 {
                guard ["seq", "cameraseq", "shot", "frame", "focusstep"].contains(name), let value = Int(pieces[1]), (1...12).contains(value) else {
                    throw TemplateError("'{\(body)}': only {seq}, {cameraseq}, {shot}, {frame} and {focusstep} take a width, written like {seq:04} (1 to 12 digits)")
                }
                width = value
            }
            if !literal.isEmpty { parts.append(.literal(literal)); literal = "" }
            parts.append(.placeholder(name, width: width))
            index = text.index(after: close)
        }
        if !literal.isEmpty { parts.append(.literal(literal)) }
        self.parts = parts
        self.text = text
    }

    /// Whether `{seq}` appears.
    public var usesSequence: Bool { uses("seq") }

    /// Whether the template has the placeholder `name`.
    public func uses(_ name: String) -> Bool {
        parts.contains { if case .placeholder(name, _) = $0 { return true } else { return false } }
    }

    /// Checks that the template names a path inside its folder: relative, no `..`, no
    /// empty component, not ending in `/`.
    public func checkStaysInside() throws(TemplateError) {
        if text.hasPrefix("/") || text.hasPrefix("~") { throw TemplateError("'\(text)' must be relative to 'directory', not absolute") }
        if text.isEmpty || text.hasSuffix("/") { throw TemplateError("'\(text)' must name a file") }
        for component in text.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map({ String(decoding: $0, as: UTF8.self) }) {
            if component == ".." { throw TemplateError("'\(text)' would leave the configured directory ('..')") }
            if component.isEmpty { throw TemplateError("'\(text)' has an empty path component ('//')") }
        }
        if text.contains("\0") { throw TemplateError("'\(text)' contains a NUL character") }
    }

    /// Renders the template as a path: every placeholder value is made path-safe, and every
    /// component fits a file name (see ``fittingComponents(_:)``).
    public func render(_ values: TemplateValues) -> String {
        Self.fittingComponents(rendered(values, Self.safeComponent))
    }

    /// Renders the template as a folder: `~` is the home folder only where the template
    /// itself begins with it, never where a value (a label, a camera's name) renders as one.
    public func renderFolder(_ values: TemplateValues) -> String {
        let rendered = render(values)
        guard case .literal(let first)? = parts.first, first == "~" || first.hasPrefix("~/") else { return rendered }
        return PluginOptions.expandingTilde(rendered)
    }

    /// The longest path component written, in UTF-8 bytes: below the 255 of Linux file
    /// systems, with room for a `-NNNN` suffix when a name is taken.
    static let maximumComponentBytes = 240

    /// `path` with each component cut to ``maximumComponentBytes`` at a character boundary,
    /// keeping a short extension, so that a long camera name or a long template never turns
    /// into ENAMETOOLONG, which would cost the photo.
    static func fittingComponents(_ path: String) -> String {
        path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { bytes -> String in
            let component = String(decoding: bytes, as: UTF8.self)
            guard component.utf8.count > maximumComponentBytes else { return component }
            var stem = component, suffix = ""
            if let dot = component.lastIndex(of: "."), dot != component.startIndex, component[dot...].utf8.count <= 16 {
                stem = String(component[..<dot])
                suffix = String(component[dot...])
            }
            var kept = ""
            for character in stem {
                if kept.utf8.count + character.utf8.count + suffix.utf8.count > maximumComponentBytes { break }
                kept.append(character)
            }
            return kept + suffix
        }.joined(separator: "/")
    }

    /// Renders the template as text (for metadata): values as they are, less NUL.
    public func renderText(_ values: TemplateValues) -> String {
        rendered(values) { $0.replacingOccurrences(of: "\0", with: "") }
    }

    /// A matcher for names this template renders, that reads back the value of the
    /// counter `counter` (`seq`, or `cameraseq` with `camera` the camera's name: only that
    /// camera's names match).
    func sequencePattern(_ counter: String = "seq", camera: String? = nil) -> SequencePattern? {
        var pattern = "^"
        var beforeCounter = true
        for part in parts {
            switch part {
            case .literal(let text): pattern += NSRegularExpression.escapedPattern(for: text)
            case .placeholder(counter, let width):
                pattern += "([0-9]{\(max(1, width)),})"
                beforeCounter = false
            case .placeholder("camera", _) where camera != nil:
                pattern += NSRegularExpression.escapedPattern(for: Self.safeComponent(camera ?? ""))
            // Greedy before the counter, lazy after: the counter is the rightmost run of
            // digits the name can have there, never digits of a label before it.
            case .placeholder: pattern += beforeCounter ? "[^/]*" : "[^/]*?"
            }
        }
        pattern += "(-[0-9]+)?$"  // names given a suffix to avoid a collision
        guard let expression = try? NSRegularExpression(pattern: pattern) else { return nil }
        return SequencePattern(expression: expression)
    }

    /// Whether the template has no placeholders.
    public var isLiteral: Bool {
        parts.allSatisfy { if case .literal = $0 { return true } else { return false } }
    }

    private func rendered(_ values: TemplateValues, _ clean: (String) -> String) -> String {
        parts.map { part in
            switch part {
            case .literal(let text): return text
            case .placeholder(let name, let width):
                let value = values.value(of: name)
                if width > 0, let number = Int(value) { return String(format: "%0\(width)d", number) }
                return clean(value)
            }
        }.joined()
    }

    /// A value made safe as (part of) one path component.
    static func safeComponent(_ value: String) -> String {
        var cleaned = String(value.unicodeScalars.map { scalar -> Character in
            scalar == "/" || scalar == "\\" || [.control, .format, .lineSeparator, .paragraphSeparator].contains(scalar.properties.generalCategory)
                ? "_" : Character(scalar)
        })
        while cleaned.utf8.count > 100 { cleaned.removeLast() }  // bytes, not characters: file names are limited in bytes
        if cleaned.isEmpty || cleaned == "." || cleaned == ".." || cleaned == "~" { return "_" }
        return cleaned
    }
}

/// A template mistake, for people.
public struct TemplateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong.
    public var description: String
    init(_ description: String) { self.description = description }
}

/// The values of one photo file for a template.
public struct TemplateValues: Sendable {
    /// The session name.
    public var session: String
    /// The sink's persistent sequence number.
    public var sequence: Int
    /// The camera's own persistent sequence number in this folder (`{cameraseq}`).
    public var cameraSequence = 0
    /// The shot number in this run.
    public var shot: Int
    /// When the photo was taken.
    public var captureTime: Date
    /// The camera name.
    public var camera: String
    /// The camera's file-name stem.
    public var name: String
    /// The camera's extension, lower case.
    public var fileExtension: String
    /// The trigger name.
    public var trigger: String
    /// When the camera says it took the photo (`YYYYMMDD-hhmmss`, ``CameraCaptureTime``);
    /// nil: `{capturetime}` is the session's capture time instead.
    public var cameraTime: String?
    /// The session label (``ShotContext/label``); nil: `{label}` is `nolabel`.
    public var label: String?
    /// The camera body's serial number; nil: `{serial}` is `unknown`.
    public var serial: String?
    /// The frame's place when a sequence took it (``ShotContext/sequence``): `{sequence}`
    /// its name (`single` otherwise), `{frame}` its index from 1 (0 otherwise), `{ev}` a
    /// bracket's offset (`+1`, `-0.7`, `0`), `{focusstep}` a focus stack's step from its
    /// first frame (its index from 0), `{angle}` a spin's frame's angle in degrees.
    public var sequenceFrame: SequenceFrame?
    /// 32 hex digits, new for every photo.
    public var uuid: String = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()

    func value(of placeholder: String) -> String {
        switch placeholder {
        case "session": return session
        case "seq": return String(sequence)
        case "cameraseq": return String(cameraSequence)
        case "shot": return String(shot)
        case "date": return Self.format(captureTime, "yyyy-MM-dd")
        case "time": return Self.format(captureTime, "HHmmss")
        case "capturetime": return cameraTime ?? Self.format(captureTime, "yyyyMMdd-HHmmss")
        case "camera": return camera
        case "name": return name
        case "ext": return fileExtension
        case "trigger": return trigger
        case "uuid": return uuid
        case "label": return label ?? "nolabel"
        case "serial": return serial ?? "unknown"
        case "sequence": return sequenceFrame?.name ?? "single"
        case "frame": return String(sequenceFrame?.index ?? 0)
        case "focusstep": return String(max(0, (sequenceFrame?.index ?? 1) - 1))
        case "angle": return sequenceFrame?.setting == "angle" ? sequenceFrame?.value ?? "0" : "0"
        case "ev":
            guard let ev = sequenceFrame?.ev, ev != 0 else { return "0" }
            let text = ev == ev.rounded() ? String(Int(ev)) : String(format: "%.1f", ev)
            return ev > 0 ? "+" + text : text
        default: return ""
        }
    }

    private static func format(_ date: Date, _ pattern: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone.current
        formatter.dateFormat = pattern
        return formatter.string(from: date)
    }
}

/// Reads the `{seq}` value back out of a rendered name.
struct SequencePattern {
    let expression: NSRegularExpression

    func number(in name: String) -> Int? {
        let range = NSRange(name.startIndex..., in: name)
        guard let match = expression.firstMatch(in: name, range: range), match.numberOfRanges > 1,
              let group = Range(match.range(at: 1), in: name) else { return nil }
        return Int(name[group])
    }
}
