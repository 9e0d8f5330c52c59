/// Paths and file names as the kernel sees them: bytes, split on the byte `/`.
///
/// Swift's `String` compares and splits by grapheme: a `/` followed by a combining mark
/// (`"/\u{301}ORDER-7"`) is one character that is not `/`, so `split(separator: "/")` and
/// `NSString.lastPathComponent` do not split there, and a label that begins with a
/// combining mark moves a file into another folder's name. Everything here works on the
/// UTF-8 bytes instead.
public enum PathName {
    private static let slash = UInt8(ascii: "/")
    private static let dot = UInt8(ascii: ".")

    /// The last component of `path` (`a/b/c.jpg` → `c.jpg`; trailing slashes ignored).
    public static func lastComponent(_ path: String) -> String {
        let bytes = Array(path.utf8)
        var end = bytes.count
        while end > 1 && bytes[end - 1] == slash { end -= 1 }
        var start = end
        while start > 0 && bytes[start - 1] != slash { start -= 1 }
        if start == end { return end > 0 ? "/" : "" }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    /// `path` without its last component (`a/b/c.jpg` → `a/b`; `c.jpg` → ``; `/c` → `/`).
    public static func parent(_ path: String) -> String {
        let bytes = Array(path.utf8)
        var end = bytes.count
        while end > 1 && bytes[end - 1] == slash { end -= 1 }
        while end > 0 && bytes[end - 1] != slash { end -= 1 }
        while end > 1 && bytes[end - 1] == slash { end -= 1 }
        return String(decoding: bytes[0..<end], as: UTF8.self)
    }

    /// The components of `path` between its slashes (empty ones left out).
    public static func components(_ path: String) -> [String] {
        path.utf8.split(separator: slash).map { String(decoding: $0, as: UTF8.self) }
    }

    /// `path` below `folder`, by bytes (`/out/A/1.jpg` below `/out` → `A/1.jpg`); `""` for
    /// `folder` itself; nil when `path` does not lie below it. A component that begins
    /// with a combining mark is below its folder all the same.
    public static func relative(_ path: String, below folder: String) -> String? {
        var root = Array(folder.utf8)
        while root.count > 1 && root.last == slash { root.removeLast() }
        let bytes = Array(path.utf8)
        if bytes == root { return "" }
        let prefix = root == [slash] ? root : root + [slash]
        guard bytes.count > prefix.count, Array(bytes[..<prefix.count]) == prefix else { return nil }
        return String(decoding: bytes[prefix.count...], as: UTF8.self)
    }

    /// A file name's extension, after its last `.` (none for `.hidden` or `name.`).
    public static func fileExtension(_ name: String) -> String {
        let bytes = Array(lastComponent(name).utf8)
        guard let dot = bytes.lastIndex(of: dot), dot > 0, dot < bytes.count - 1 else { return "" }
        return String(decoding: bytes[(dot + 1)...], as: UTF8.self)
    }

    /// A file name without its extension (`IMG_1.CR2` → `IMG_1`).
    public static func stem(_ name: String) -> String {
        let last = lastComponent(name)
        let bytes = Array(last.utf8)
        guard let dot = bytes.lastIndex(of: dot), dot > 0, dot < bytes.count - 1 else { return last }
        return String(decoding: bytes[..<dot], as: UTF8.self)
    }

    /// `path` without the extension of its last component (`a/IMG_1.CR2` → `a/IMG_1`).
    public static func deletingExtension(_ path: String) -> String {
        let ext = fileExtension(path)
        guard !ext.isEmpty else { return path }
        return String(decoding: Array(path.utf8).dropLast(ext.utf8.count + 1), as: UTF8.self)
    }

    /// A name from outside as a log line may show it: invalid UTF-8 as `\xHH`, control
    /// characters escaped (``LogText``).
    public static func shown(_ bytes: [UInt8]) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return LogText.escaped(text) }
        var out = ""
        var index = 0
        while index < bytes.count {
            // The longest valid UTF-8 sequence from here, else one byte escaped.
            var taken = false
            for length in stride(from: min(4, bytes.count - index), through: 1, by: -1) {
                if let piece = String(validating: bytes[index..<(index + length)], as: UTF8.self) {
                    out += LogText.escaped(piece)
                    index += length
                    taken = true
                    break
                }
            }
            if !taken {
                out += "\\x" + String(bytes[index], radix: 16, uppercase: false).leftPadded(to: 2)
                index += 1
            }
        }
        return out
    }

    /// Why a file name from outside (a hot folder's, a card's) is not taken as a photo's
    /// name; nil when it is. Refused: a name that is not UTF-8, and one with a control
    /// character (a newline forges a line of a ledger or a log) or a line or paragraph
    /// separator.
    public static func nameProblem(_ bytes: [UInt8]) -> String? {
        guard let text = String(validating: bytes, as: UTF8.self) else { return "its name is not UTF-8" }
        if text.unicodeScalars.contains(where: LogText.isControl) { return "its name holds a control character (a line break, say)" }
        return nil
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
