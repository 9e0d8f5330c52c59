import Foundation

/// Changes to a packet read as an ``XMPDocument``, made in place: the property changed is
/// rewritten where it is (an attribute, or an element), or added to the first
/// `rdf:Description`; every other byte of the text stays as it was (darktable's history,
/// another program's properties). What is written comes from ``XMPPacket``'s writer.
extension XMPDocument {
    /// Why a packet could not take a change.
    public struct EditError: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// The text with the simple property `local` of `namespace` set to `value`, or removed
    /// for `nil`: replaced where it is (attribute or element), else added as an attribute
    /// of the first `rdf:Description`, its namespace declared there when no prefix is bound
    /// to it.
    public func setting(_ namespace: XMPNamespace, _ local: String, to value: String?) throws(EditError) -> String {
        var text = text
        if let (range, isElement) = propertyRange(namespace.uri, local) {
            guard let value else {
                text.replaceSubrange(range, with: "")
                return text
            }
            let written = text[range]
            let name = isElement ? String(written.dropFirst().prefix { !$0.isWhitespace && $0 != ">" && $0 != "/" })
                                 : String(written.drop { $0.isWhitespace }.prefix { $0 != "=" && !$0.isWhitespace })
            let leading = String(written.prefix { $0.isWhitespace })
            text.replaceSubrange(range, with: isElement ? XMPPacket.element(name, .text(value)) : leading + XMPPacket.attribute(name, value))
            return text
        }
        guard let value else { return text }
        guard let description = descriptions.first else {
            throw EditError(description: "it has no rdf:Description to add \(namespace.prefix):\(local) to")
        }
        let (prefix, declaration) = Self.prefix(for: namespace, in: description)
        text.insert(contentsOf: (declaration ?? "") + "\n    " + XMPPacket.attribute("\(prefix):\(local)", value), at: description.nameEnd)
        return text
    }

    /// The text with the list property `local` of `namespace` (a bag, a sequence or an
    /// alternative) set to `value`, or removed when it holds no item: replaced where it is,
    /// under the prefix it is written with, else added inside the first `rdf:Description`.
    public func settingList(_ namespace: XMPNamespace, _ local: String, to value: XMPPacket.Value) throws(EditError) -> String {
        let isEmpty: Bool = switch value {
        case .text(let text), .alternative(let text): text.isEmpty
        case .sequence(let items), .bag(let items): items.isEmpty
        }
        var text = text
        if let (_, element) = list(namespace.uri, local) {
            text.replaceSubrange(element.start..<element.end, with: isEmpty ? "" : XMPPacket.element(element.name, value))
            return text
        }
        guard !isEmpty else { return text }
        guard let description = descriptions.first else {
            throw EditError(description: "it has no rdf:Description element to add \(namespace.prefix):\(local) to")
        }
        let (prefix, declaration) = Self.prefix(for: namespace, in: description)
        let element = XMPPacket.element("\(prefix):\(local)", value)
        if description.isEmpty {
            // `<rdf:Description …/>`: opened, given the element, and closed.
            let close = text.index(description.startTagEnd, offsetBy: -2)
            text.replaceSubrange(close..<description.startTagEnd, with: ">\n   \(element)\n  </\(description.name)>")
        } else {
            guard let endTag = text[..<description.end].range(of: "</", options: .backwards) else { return text }
            text.insert(contentsOf: "   " + element + "\n  ", at: endTag.lowerBound)
        }
        if let declaration { text.insert(contentsOf: declaration, at: description.nameEnd) }
        return text
    }

    /// A prefix bound to `namespace` where `element` is, or its usual prefix (or a free one
    /// like it: `shutterpipe2` when `shutterpipe` means another namespace there) with the
    /// declaration to add to the element.
    public static func prefix(for namespace: XMPNamespace, in element: Element) -> (prefix: String, declaration: String?) {
        if let bound = prefix(of: namespace.uri, in: element) { return (bound, nil) }
        var prefix = namespace.prefix, number = 1
        while element.scope[prefix] != nil { number += 1; prefix = "\(namespace.prefix)\(number)" }
        return (prefix, "\n    " + XMPPacket.attribute("xmlns:\(prefix)", namespace.uri))
    }
}
