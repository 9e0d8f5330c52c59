import Foundation
import ShutterPipeSupport

/// A namespace of XMP properties and the prefix written for it.
public struct XMPNamespace: Sendable, Equatable {
    public var prefix: String
    public var uri: String

    public init(prefix: String, uri: String) {
        self.prefix = prefix
        self.uri = uri
    }

    public static let rdf = XMPNamespace(prefix: "rdf", uri: "http://www.w3.org/1999/02/22-rdf-syntax-ns#")
    public static let dc = XMPNamespace(prefix: "dc", uri: "http://purl.org/dc/elements/1.1/")
    public static let xmp = XMPNamespace(prefix: "xmp", uri: "http://ns.adobe.com/xap/1.0/")
    public static let photoshop = XMPNamespace(prefix: "photoshop", uri: "http://ns.adobe.com/photoshop/1.0/")
    public static let exif = XMPNamespace(prefix: "exif", uri: "http://ns.adobe.com/exif/1.0/")
    /// shutterpipe's marks that no editor keeps in XMP (`shutterpipe:Pick`).
    public static let shutterpipeMarks = XMPNamespace(prefix: "shutterpipe", uri: "http://ns.shutterpipe.org/1.0/")
    /// A sequence frame's place (`shutterpipe:Sequence`, `Frame`, `Frames`, …): what a
    /// stacking or HDR tool, and `shots rebuild`, group by.
    public static let shutterpipeSequence = XMPNamespace(prefix: "shutterpipe", uri: "https://shutterpipe.org/ns/sequence/1.0/")
}

/// A new XMP packet: one `rdf:Description` with its properties, simple ones as attributes
/// and the rest as elements, in the order given. The one writer of XMP text: the files
/// sink's embedded and sidecar packets, the catalogue's new sidecars, and the elements an
/// edit of an existing packet adds (``XMPDocument/setting(_:_:to:)``) are all written here.
/// Every value is escaped (``XMLText``), so no text reaches the packet as markup.
public struct XMPPacket: Sendable {
    /// What a property holds.
    public enum Value: Sendable, Equatable {
        /// Simple text: an attribute of the description.
        case text(String)
        /// A language alternative with one `x-default` item (`dc:rights`, `dc:description`).
        case alternative(String)
        /// An ordered list (`dc:creator`).
        case sequence([String])
        /// An unordered set (`dc:subject`).
        case bag([String])
    }

    public struct Property: Sendable, Equatable {
        public var namespace: XMPNamespace
        public var name: String
        public var value: Value

        public init(_ namespace: XMPNamespace, _ name: String, _ value: Value) {
            self.namespace = namespace
            self.name = name
            self.value = value
        }
    }

    public var properties: [Property]
    /// Namespaces declared whether or not a property uses them, before those the
    /// properties use.
    public var declared: [XMPNamespace]

    public init(_ properties: [Property] = [], declaring declared: [XMPNamespace] = []) {
        self.properties = properties
        self.declared = declared
    }

    /// The `<?xpacket?>` processing instructions around a packet embedded in a file.
    public static let wrapperStart = "<?xpacket begin=\"\u{FEFF}\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n"
    public static let wrapperEnd = "<?xpacket end=\"w\"?>"

    /// The packet's text; `wrapped` adds the `<?xpacket?>` wrapper a JPEG's XMP segment expects.
    public func text(wrapped: Bool) -> String {
        var namespaces: [XMPNamespace] = []
        for namespace in declared + properties.map(\.namespace) where !namespaces.contains(namespace) { namespaces.append(namespace) }
        var text = wrapped ? Self.wrapperStart : ""
        text += """
        <x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="shutterpipe">
         <rdf:RDF xmlns:rdf="\(XMPNamespace.rdf.uri)">
          <rdf:Description rdf:about=""
        """
        for namespace in namespaces { text += "\n    xmlns:\(namespace.prefix)=\"\(XMLText.escaped(namespace.uri))\"" }
        for property in properties {
            if case .text(let value) = property.value { text += "\n    " + Self.attribute("\(property.namespace.prefix):\(property.name)", value) }
        }
        text += ">\n"
        for property in properties {
            if case .text = property.value { continue }
            text += "   " + Self.element("\(property.namespace.prefix):\(property.name)", property.value) + "\n"
        }
        text += "  </rdf:Description>\n </rdf:RDF>\n</x:xmpmeta>\n"
        if wrapped { text += Self.wrapperEnd }
        return text
    }

    /// `name="value"`, escaped.
    public static func attribute(_ name: String, _ value: String) -> String {
        "\(name)=\"\(XMLText.escaped(value))\""
    }

    /// The property `name` (qualified) written as an element.
    public static func element(_ name: String, _ value: Value) -> String {
        func items(_ values: [String], language: Bool = false) -> String {
            values.map { "<rdf:li\(language ? " xml:lang=\"x-default\"" : "")>\(XMLText.escaped($0))</rdf:li>" }.joined()
        }
        switch value {
        case .text(let text): return "<\(name)>\(XMLText.escaped(text))</\(name)>"
        case .alternative(let text): return "<\(name)><rdf:Alt>\(items([text], language: true))</rdf:Alt></\(name)>"
        case .sequence(let values): return "<\(name)><rdf:Seq>\(items(values))</rdf:Seq></\(name)>"
        case .bag(let values): return "<\(name)><rdf:Bag>\(items(values))</rdf:Bag></\(name)>"
        }
    }
}
