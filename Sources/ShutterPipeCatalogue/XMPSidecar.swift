#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// Ratings, labels and picks in XMP sidecars, where editors read them
/// (docs/catalogue.md has which editor reads what):
/// - `xmp:Rating` 0–5, and -1 for a reject, as Lightroom and darktable write it;
/// - `xmp:Label`, the colour label as a word ("Red");
/// - `shutterpipe:Pick="1"` for a pick, which no editor keeps in XMP (Lightroom's pick
///   flag lives in its catalogue), so that `shots rebuild` finds it again.
///
/// A sidecar another program wrote is merged, never replaced: only these properties
/// change, everything else (darktable's edit history, the files sink's metadata) stays
/// as it was. The new text goes to a temporary file in the same folder, is fsynced and
/// renamed over the old one, and the folder is fsynced: a crash leaves the old sidecar
/// or the new one, whole. Writers of one folder take turns (an `flock` on the folder).
public enum XMPSidecar {
    /// What a sidecar says about a shot.
    /// How sidecars are named, as the files sink's `sidecarName` says.
    public enum Naming: String, Sendable, CaseIterable {
        /// `IMG_1.CR2.xmp`: darktable, digiKam (the files sink's default).
        case append
        /// `IMG_1.xmp`: Lightroom, Bridge, Capture One.
        case replace

        /// The sidecar of the photo at `path`.
        public func sidecar(of path: String) -> String {
            switch self {
            case .append: return path + ".xmp"
            case .replace: return PathName.deletingExtension(path) + ".xmp"
            }
        }
    }

    static let xmpNamespace = "http://ns.adobe.com/xap/1.0/"
    static let ourNamespace = "http://ns.shutterpipe.org/1.0/"

    /// The marks in the sidecar at `path`, or `nil` when there is none or it says none.
    public static func read(_ path: String) -> ShotMarks? {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else { return nil }
        let rating = property("xmp:Rating", in: text).flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        let label = property("xmp:Label", in: text).map(unescape)
        let picked = property("shutterpipe:Pick", in: text) == "1"
        guard rating != nil || label != nil || picked else { return nil }
        var marks = ShotMarks(rating: max(0, min(5, rating ?? 0)), label: label?.isEmpty == true ? nil : label)
        marks.pick = rating == -1 ? .rejected : picked ? .picked : .none
        return marks
    }

    /// Writes `marks` into the sidecar at `path`, merging with what is there.
    public static func write(_ marks: ShotMarks, to path: String) throws(SidecarError) {
        try edit(path) { text throws(SidecarError) in try merge(marks, into: text, path: path) }
    }

    /// `text`, an XMP packet, with the marks set (`path` names it in errors).
    static func merge(_ marks: ShotMarks, into text: String, path: String) throws(SidecarError) -> String {
        let rating = marks.pick == .rejected ? -1 : marks.rating
        var text = try set("xmp:Rating", to: String(rating), namespace: ("xmp", xmpNamespace), in: text, path: path)
        text = try set("xmp:Label", to: marks.label.map(escape), namespace: ("xmp", xmpNamespace), in: text, path: path)
        return try set("shutterpipe:Pick", to: marks.pick == .picked ? "1" : nil, namespace: ("shutterpipe", ourNamespace), in: text, path: path)
    }

    // MARK: Keywords

    /// The keywords (`dc:subject`) of the sidecar at `path`; empty when there is none.
    public static func readKeywords(_ path: String) -> [String] {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else { return [] }
        return keywords(in: text)
    }

    static func keywords(in text: String) -> [String] {
        guard let open = text.range(of: "<dc:subject>"), let close = text.range(of: "</dc:subject>", range: open.upperBound..<text.endIndex) else { return [] }
        let inside = String(text[open.upperBound..<close.lowerBound])
        let item = try! NSRegularExpression(pattern: "<rdf:li[^>]*>([^<]*)</rdf:li>")
        return item.matches(in: inside, range: NSRange(inside.startIndex..., in: inside)).compactMap { match in
            Range(match.range(at: 1), in: inside).map { unescape(String(inside[$0])) }
        }
    }

    /// Adds and removes keywords in the sidecar at `path`, keeping those another program (or
    /// the files sink's `Keywords`) put there; returns the sidecar's keywords now.
    @discardableResult
    public static func changeKeywords(adding: [String], removing: [String], in path: String) throws(SidecarError) -> [String] {
        var result: [String] = []
        try edit(path) { text throws(SidecarError) in
            var keywords = keywords(in: text)
            keywords += adding.filter { !keywords.contains($0) }
            keywords.removeAll { removing.contains($0) }
            result = keywords
            return try setKeywords(keywords, in: text, path: path)
        }
        return result
    }

    static func setKeywords(_ keywords: [String], in text: String, path: String) throws(SidecarError) -> String {
        var text = text
        let element = keywords.isEmpty ? "" : "<dc:subject><rdf:Bag>" + keywords.map { "<rdf:li>\(escape($0))</rdf:li>" }.joined() + "</rdf:Bag></dc:subject>"
        if let open = text.range(of: "<dc:subject>"), let close = text.range(of: "</dc:subject>", range: open.upperBound..<text.endIndex) {
            text.replaceSubrange(open.lowerBound..<close.upperBound, with: element)
            return text
        }
        guard !keywords.isEmpty else { return text }
        guard let start = text.range(of: "<rdf:Description"), let end = text.range(of: "</rdf:Description>", range: start.upperBound..<text.endIndex) else {
            throw SidecarError(path: path, reason: "it has no rdf:Description element to add keywords to; left as it is")
        }
        text.insert(contentsOf: "   " + element + "\n  ", at: end.lowerBound)
        if !text.contains("xmlns:dc=") { text.insert(contentsOf: "\n    xmlns:dc=\"http://purl.org/dc/elements/1.1/\"", at: start.upperBound) }
        return text
    }

    /// Reads the sidecar at `path` (or starts an empty one), changes it, and replaces it
    /// durably, holding the folder's lock.
    static func edit(_ path: String, _ change: (String) throws(SidecarError) -> String) throws(SidecarError) {
        let folder = PathName.parent(path)
        let lock = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard lock >= 0 else { throw SidecarError(path: path, reason: String(cString: strerror(errno))) }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 && errno == EINTR {}
        var text = emptyPacket
        if let data = FileManager.default.contents(atPath: path) {
            guard let existing = String(data: data, encoding: .utf8) else { throw SidecarError(path: path, reason: "it is not UTF-8 text; left as it is") }
            text = existing
        }
        try replaceDurably(path, with: Data(try change(text).utf8), folderDescriptor: lock)
    }

    static let emptyPacket = """
    <x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="shutterpipe">
     <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
      <rdf:Description rdf:about=""
        xmlns:xmp="http://ns.adobe.com/xap/1.0/">
      </rdf:Description>
     </rdf:RDF>
    </x:xmpmeta>

    """

    /// The value of `name`, written as an attribute (`xmp:Rating="3"`) or as an element
    /// (`<xmp:Rating>3</xmp:Rating>`).
    static func property(_ name: String, in text: String) -> String? {
        let quoted = NSRegularExpression.escapedPattern(for: name)
        for pattern in ["\\s\(quoted)\\s*=\\s*\"([^\"]*)\"", "\\s\(quoted)\\s*=\\s*'([^']*)'", "<\(quoted)>([^<]*)</\(quoted)>"] {
            let expression = try! NSRegularExpression(pattern: pattern)
            if let match = expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
               let range = Range(match.range(at: 1), in: text) {
                return String(text[range])
            }
        }
        return nil
    }

    /// `text` with `name` set to `value` (already escaped), or removed for `nil`: replaced
    /// where it is, else added as an attribute of the first `rdf:Description`, with its
    /// namespace declared there when the packet does not declare the prefix yet.
    static func set(_ name: String, to value: String?, namespace: (prefix: String, uri: String), in text: String, path: String) throws(SidecarError) -> String {
        let quoted = NSRegularExpression.escapedPattern(for: name)
        var text = text
        var found = false
        for pattern in ["\\s\(quoted)\\s*=\\s*\"[^\"]*\"", "\\s\(quoted)\\s*=\\s*'[^']*'", "\\s*<\(quoted)>[^<]*</\(quoted)>"] {
            let expression = try! NSRegularExpression(pattern: pattern)
            guard let match = expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
                  let range = Range(match.range, in: text) else { continue }
            found = true
            let isElement = pattern.hasPrefix("\\s*<")
            let leading = String(text[range].prefix { $0.isWhitespace })
            if let value {
                text.replaceSubrange(range, with: isElement ? "\(leading)<\(name)>\(value)</\(name)>" : "\(leading)\(name)=\"\(value)\"")
            } else {
                text.replaceSubrange(range, with: "")
            }
            break
        }
        guard !found, let value else { return text }
        guard let description = text.range(of: "<rdf:Description") else {
            throw SidecarError(path: path, reason: "it has no rdf:Description to add \(name) to; left as it is")
        }
        var insertion = ""
        if !text.contains("xmlns:\(namespace.prefix)=") { insertion += "\n    xmlns:\(namespace.prefix)=\"\(namespace.uri)\"" }
        insertion += "\n    \(name)=\"\(value)\""
        text.insert(contentsOf: insertion, at: description.upperBound)
        return text
    }

    /// Replaces the file at `path` with `data`: a temporary file in the same folder,
    /// fsynced, renamed over it, then the folder fsynced.
    static func replaceDurably(_ path: String, with data: Data, folderDescriptor: Int32, mode: mode_t = 0o644) throws(SidecarError) {
        let folder = PathName.parent(path)
        let name = PathName.lastComponent(path)
        let temporary = (folder.isEmpty ? "" : folder + "/") + ".\(name).shutterpipe-tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw SidecarError(path: path, reason: String(cString: strerror(errno))) }
        fchmod(descriptor, mode)  // the mode itself, whatever the umask
        var failure: String?
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 { if errno == EINTR { continue }; failure = String(cString: strerror(errno)); return }
                offset += written
            }
        }
        if failure == nil && fsync(descriptor) != 0 { failure = String(cString: strerror(errno)) }
        close(descriptor)
        if failure == nil && rename(temporary, path) != 0 { failure = String(cString: strerror(errno)) }
        if let failure {
            unlink(temporary)
            throw SidecarError(path: path, reason: failure)
        }
        fsync(folderDescriptor)
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
    }
}

/// A sidecar could not be written.
public struct SidecarError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "cannot write the sidecar '\(path)': \(reason)" }
}
