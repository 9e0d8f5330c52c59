import Foundation
import ShutterPipeSupport

/// An XMP packet read as XML, strictly: elements, attributes, character data and their
/// namespaces, each with where it lies in the text, so that a property is read where it
/// is and changed in place without touching a byte of anything else (darktable's history,
/// another program's properties).
///
/// Marks are read from this model, never by a pattern over the text: a keyword whose text
/// is `x' xmp:Rating='5` is character data inside an `rdf:li`, not an attribute. A
/// DOCTYPE (which XMP forbids) is refused, and so are unknown entities: there is nothing
/// to expand.
public struct XMPDocument {
    public static let rdf = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
    public static let xmlns = "http://www.w3.org/2000/xmlns/"

    /// An element of the packet.
    public final class Element {
        /// The name as written (`xmp:Rating`), its namespace and its local part.
        public let name: String
        let namespace: String?
        let local: String
        let attributes: [Attribute]
        /// The prefixes declared on this element and above it (prefix → namespace; "" is the default).
        public let scope: [String: String]
        var children: [Element] = []
        /// The character data directly inside, entities decoded.
        var text = ""
        /// `<` of the start tag; the end of the name in it; the end of the start tag (after
        /// `>`); the end of the element (after its end tag, or the start tag when empty).
        public let start: String.Index
        public let nameEnd: String.Index
        public let startTagEnd: String.Index
        public var end: String.Index
        /// Whether it was written `<name …/>`.
        public let isEmpty: Bool

        init(name: String, namespace: String?, local: String, attributes: [Attribute], scope: [String: String], start: String.Index,
             nameEnd: String.Index, startTagEnd: String.Index, isEmpty: Bool) {
            self.name = name
            self.namespace = namespace
            self.local = local
            self.attributes = attributes
            self.scope = scope
            self.start = start
            self.nameEnd = nameEnd
            self.startTagEnd = startTagEnd
            self.end = startTagEnd
            self.isEmpty = isEmpty
        }

        func isNamed(_ namespace: String, _ local: String) -> Bool { self.namespace == namespace && self.local == local }

        /// This element and every one inside it, in document order.
        var all: [Element] { [self] + children.flatMap(\.all) }
    }

    /// An attribute, with its range from the white space before it to its closing quote.
    public struct Attribute {
        let name: String
        let namespace: String?
        let local: String
        let value: String
        let range: Range<String.Index>
    }

    /// Why a packet could not be read.
    public struct ParseError: Error, CustomStringConvertible {
        public var description: String
    }

    public let text: String
    public let root: Element

    /// The `rdf:Description` elements, in document order.
    public var descriptions: [Element] { root.all.filter { $0.isNamed(Self.rdf, "Description") } }

    /// Reads `text`; throws for what is not well-formed XML.
    public init(_ text: String) throws(ParseError) {
        self.text = text
        var reader = Reader(text: text)
        root = try reader.document()
    }

    /// The value of the property `local` of `namespace`: an attribute of an
    /// `rdf:Description`, or a simple element inside one (trimmed).
    public func property(_ namespace: String, _ local: String) -> String? {
        for description in descriptions {
            if let attribute = description.attributes.first(where: { $0.namespace == namespace && $0.local == local }) { return attribute.value }
            if let element = description.children.first(where: { $0.isNamed(namespace, local) }), element.children.isEmpty {
                return element.text.trimmingCharacters(in: .whitespacesAndNewlines)
            }
        }
        return nil
    }

    /// Where the property `local` of `namespace` is written: an attribute's range, or an element's.
    public func propertyRange(_ namespace: String, _ local: String) -> (range: Range<String.Index>, isElement: Bool)? {
        for description in descriptions {
            if let attribute = description.attributes.first(where: { $0.namespace == namespace && $0.local == local }) { return (attribute.range, false) }
            if let element = description.children.first(where: { $0.isNamed(namespace, local) }) { return (element.start..<element.end, true) }
        }
        return nil
    }

    /// The items (`rdf:li`) of the container (`rdf:Bag`, `rdf:Seq`, `rdf:Alt`) that is the
    /// property `local` of `namespace`, and the property element itself.
    public func list(_ namespace: String, _ local: String) -> (items: [String], element: Element)? {
        for description in descriptions {
            guard let property = description.children.first(where: { $0.isNamed(namespace, local) }) else { continue }
            let items = property.children.filter { $0.namespace == Self.rdf }.flatMap(\.children).filter { $0.isNamed(Self.rdf, "li") }
            return (items.map(\.text), property)
        }
        return nil
    }

    /// A prefix bound to `namespace` where `element` is, if any.
    public static func prefix(of namespace: String, in element: Element) -> String? {
        element.scope.first { $0.value == namespace && !$0.key.isEmpty }?.key
    }
}

/// The tokenizer behind ``XMPDocument``: one pass over the UTF-8 bytes.
private struct Reader {
    public let text: String
    public let bytes: String.UTF8View
    public var index: String.Index
    public var stack: [XMPDocument.Element] = []
    public var root: XMPDocument.Element?
    public static let maximumDepth = 256

    public init(text: String) {
        self.text = text
        bytes = text.utf8
        index = bytes.startIndex
    }

    public mutating func document() throws(XMPDocument.ParseError) -> XMPDocument.Element {
        while index < bytes.endIndex {
            if bytes[index] == UInt8(ascii: "<") {
                try markup()
            } else {
                let start = index
                while index < bytes.endIndex && bytes[index] != UInt8(ascii: "<") { index = bytes.index(after: index) }
                let piece = try Self.decoded(String(text[start..<index]))
                if let current = stack.last {
                    current.text += piece
                } else if !piece.allSatisfy({ $0.isWhitespace || $0 == "\u{FEFF}" }) {
                    throw XMPDocument.ParseError(description: "text outside the packet's element")
                }
            }
        }
        guard stack.isEmpty, let root else { throw XMPDocument.ParseError(description: stack.isEmpty ? "no element" : "'\(stack.last!.name)' is not closed") }
        return root
    }

    private func starts(with literal: String) -> Bool {
        bytes[index...].starts(with: literal.utf8)
    }

    /// Moves past `literal`, which must come.
    private mutating func skip(past literal: String) throws(XMPDocument.ParseError) {
        guard let found = text[index...].range(of: literal) else { throw XMPDocument.ParseError(description: "'\(literal)' never comes") }
        index = found.upperBound
    }

    private mutating func markup() throws(XMPDocument.ParseError) {
        if starts(with: "<?") { return try skip(past: "?>") }
        if starts(with: "<!--") { return try skip(past: "-->") }
        if starts(with: "<![CDATA[") {
            let open = text.index(index, offsetBy: 9)
            try skip(past: "]]>")
            guard let current = stack.last else { throw XMPDocument.ParseError(description: "CDATA outside the packet's element") }
            current.text += String(text[open..<text.index(index, offsetBy: -3)])
            return
        }
        if starts(with: "<!") { throw XMPDocument.ParseError(description: "a DOCTYPE or declaration, which XMP does not allow") }
        if starts(with: "</") { return try endTag() }
        try startTag()
    }

    private mutating func name() throws(XMPDocument.ParseError) -> String {
        let start = index
        while index < bytes.endIndex, !Self.isSpace(bytes[index]), !"=/>\"'<".utf8.contains(bytes[index]) { index = bytes.index(after: index) }
        guard start < index else { throw XMPDocument.ParseError(description: "a name is missing") }
        return String(text[start..<index])
    }

    private mutating func skipSpace() {
        while index < bytes.endIndex && Self.isSpace(bytes[index]) { index = bytes.index(after: index) }
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    private mutating func startTag() throws(XMPDocument.ParseError) {
        let start = index
        index = bytes.index(after: index)
        let elementName = try name()
        let nameEnd = index
        var raw: [(name: String, value: String, range: Range<String.Index>)] = []
        var isEmpty = false
        while true {
            let before = index
            skipSpace()
            guard index < bytes.endIndex else { throw XMPDocument.ParseError(description: "'\(elementName)' is not closed") }
            if bytes[index] == UInt8(ascii: ">") { index = bytes.index(after: index); break }
            if starts(with: "/>") { index = text.index(index, offsetBy: 2); isEmpty = true; break }
            guard before < index else { throw XMPDocument.ParseError(description: "attributes of '\(elementName)' must be apart") }
            let attributeName = try name()
            skipSpace()
            guard index < bytes.endIndex, bytes[index] == UInt8(ascii: "=") else { throw XMPDocument.ParseError(description: "'\(attributeName)' has no value") }
            index = bytes.index(after: index)
            skipSpace()
            guard index < bytes.endIndex, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
                throw XMPDocument.ParseError(description: "the value of '\(attributeName)' is not quoted")
            }
            let quote = bytes[index]
            index = bytes.index(after: index)
            let valueStart = index
            while index < bytes.endIndex && bytes[index] != quote {
                guard bytes[index] != UInt8(ascii: "<") else { throw XMPDocument.ParseError(description: "'<' in the value of '\(attributeName)'") }
                index = bytes.index(after: index)
            }
            guard index < bytes.endIndex else { throw XMPDocument.ParseError(description: "the value of '\(attributeName)' is not closed") }
            let value = try Self.decoded(String(text[valueStart..<index]))
            index = bytes.index(after: index)
            guard !raw.contains(where: { $0.name == attributeName }) else { throw XMPDocument.ParseError(description: "'\(attributeName)' twice on '\(elementName)'") }
            raw.append((attributeName, value, before..<index))
        }
        var scope = stack.last?.scope ?? ["xml": "http://www.w3.org/XML/1998/namespace"]
        for attribute in raw {
            if attribute.name == "xmlns" { scope[""] = attribute.value }
            if attribute.name.hasPrefix("xmlns:") { scope[String(attribute.name.dropFirst(6))] = attribute.value }
        }
        func resolve(_ qualified: String, element: Bool) -> (String?, String) {
            guard let colon = qualified.firstIndex(of: ":") else { return (element ? scope[""] : nil, qualified) }
            let prefix = String(qualified[..<colon])
            if prefix == "xmlns" { return (XMPDocument.xmlns, String(qualified[qualified.index(after: colon)...])) }
            return (scope[prefix], String(qualified[qualified.index(after: colon)...]))
        }
        let attributes = raw.map { attribute -> XMPDocument.Attribute in
            let (namespace, local) = attribute.name == "xmlns" ? (XMPDocument.xmlns, "") : resolve(attribute.name, element: false)
            return XMPDocument.Attribute(name: attribute.name, namespace: namespace, local: local, value: attribute.value, range: attribute.range)
        }
        let (namespace, local) = resolve(elementName, element: true)
        let element = XMPDocument.Element(name: elementName, namespace: namespace, local: local, attributes: attributes, scope: scope,
                                          start: start, nameEnd: nameEnd, startTagEnd: index, isEmpty: isEmpty)
        if let parent = stack.last {
            parent.children.append(element)
        } else {
            guard root == nil else { throw XMPDocument.ParseError(description: "a second element outside the packet's") }
            root = element
        }
        if !isEmpty {
            guard stack.count < Self.maximumDepth else { throw XMPDocument.ParseError(description: "elements nested deeper than \(Self.maximumDepth)") }
            stack.append(element)
        }
    }

    private mutating func endTag() throws(XMPDocument.ParseError) {
        index = text.index(index, offsetBy: 2)
        let elementName = try name()
        skipSpace()
        guard index < bytes.endIndex, bytes[index] == UInt8(ascii: ">") else { throw XMPDocument.ParseError(description: "the end tag of '\(elementName)' is not closed") }
        index = bytes.index(after: index)
        guard let open = stack.popLast(), open.name == elementName else {
            throw XMPDocument.ParseError(description: "'</\(elementName)>' closes no open element")
        }
        open.end = index
    }

    /// `text` with its entity and character references replaced.
    public static func decoded(_ text: String) throws(XMPDocument.ParseError) -> String {
        guard text.contains("&") else { return text }
        var out = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            guard let semicolon = rest[amp...].firstIndex(of: ";") else { throw XMPDocument.ParseError(description: "'&' without ';'") }
            let entity = rest[rest.index(after: amp)..<semicolon]
            switch entity {
            case "lt": out += "<"
            case "gt": out += ">"
            case "amp": out += "&"
            case "quot": out += "\""
            case "apos": out += "'"
            default:
                let number = entity.hasPrefix("#x") ? UInt32(entity.dropFirst(2), radix: 16) : entity.hasPrefix("#") ? UInt32(entity.dropFirst(), radix: 10) : nil
                guard let number, let scalar = Unicode.Scalar(number), XMLText.isAllowed(scalar) else {
                    throw XMPDocument.ParseError(description: "the reference '&\(entity);' is not one XML knows")
                }
                out.unicodeScalars.append(scalar)
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return out + rest
    }
}
