#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeImaging
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
    static let xmpNamespace = XMPNamespace.xmp.uri
    static let ourNamespace = XMPNamespace.shutterpipeMarks.uri
    static let dcNamespace = XMPNamespace.dc.uri
    /// The largest sidecar read: a sidecar is a few KB, darktable's with a long history a
    /// few hundred; one over this is refused by name, never read.
    public static let sizeLimit: Int64 = 16 << 20

    /// The marks in the sidecar at `path`, or `nil` when there is none, it says none, or
    /// it cannot be read (``readMarks(_:)`` says why).
    public static func read(_ path: String) -> ShotMarks? {
        (try? readMarks(path)) ?? nil
    }

    /// The marks in the sidecar at `path`; `nil` when there is none or it says none;
    /// throws, naming it, for one that is refused (a link, a FIFO, over ``sizeLimit``,
    /// not UTF-8, not well-formed).
    public static func readMarks(_ path: String) throws(SidecarError) -> ShotMarks? {
        guard let document = try document(at: path) else { return nil }
        return marks(in: document)
    }

    /// The marks an XMP packet holds.
    ///
    /// A reject is `xmp:Rating="-1"` (as Lightroom and darktable write it, for a shot with
    /// no stars) or `shutterpipe:Pick="-1"` (ours, beside the stars an editor shows).
    static func marks(in document: XMPDocument) -> ShotMarks? {
        let rating = document.property(xmpNamespace, "Rating").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        let label = document.property(xmpNamespace, "Label")
        let pick = document.property(ourNamespace, "Pick")
        guard rating != nil || label != nil || pick != nil else { return nil }
        var marks = ShotMarks(rating: max(0, min(5, rating ?? 0)), label: label?.isEmpty == true ? nil : label)
        marks.pick = rating == -1 || pick == "-1" ? .rejected : pick == "1" ? .picked : .none
        return marks
    }

    /// The packet of the sidecar at `path`, opened once without following a link, checked
    /// and parsed; nil when there is none.
    static func document(at path: String) throws(SidecarError) -> XMPDocument? {
        guard let text = try text(at: path) else { return nil }
        do { return try XMPDocument(text) } catch { throw SidecarError(path: path, reason: "it is not well-formed XML (\(error)); left as it is", refused: true) }
    }

    /// The text of the sidecar at `path`; nil when there is none.
    static func text(at path: String) throws(SidecarError) -> String? {
        let data: Data
        do { data = try UntrustedFile.contents(of: path, limits: .init(bytes: sizeLimit)) } catch {
            if error.reason == .missing { return nil }
            throw SidecarError(path: path, reason: "\(error.why); not read", refused: true)
        }
        guard let text = String(validating: data, as: UTF8.self) else { throw SidecarError(path: path, reason: "it is not UTF-8 text; left as it is", refused: true) }
        return text
    }

    /// Writes `marks` into the sidecar at `path`, merging with what is there.
    public static func write(_ marks: ShotMarks, to path: String) throws(SidecarError) {
        try edit(path) { text throws(SidecarError) in try merge(marks, into: text, path: path) }
    }

    /// `text`, an XMP packet, with the marks set (`path` names it in errors).
    /// A reject keeps the stars an editor can show: `xmp:Rating` is the stars, and -1 (the
    /// editors' reject) only for a rejected shot without stars; `shutterpipe:Pick` says
    /// picked (`1`) or rejected (`-1`).
    static func merge(_ marks: ShotMarks, into text: String, path: String) throws(SidecarError) -> String {
        let rating = marks.pick == .rejected && marks.rating == 0 ? -1 : marks.rating
        var text = try set(.xmp, "Rating", to: String(rating), in: text, path: path)
        text = try set(.xmp, "Label", to: marks.label, in: text, path: path)
        let pick: String? = switch marks.pick { case .picked: "1"; case .rejected: "-1"; default: nil }
        return try set(.shutterpipeMarks, "Pick", to: pick, in: text, path: path)
    }

    // MARK: Keywords

    /// The keywords (`dc:subject`) of the sidecar at `path`; empty when there is none or
    /// it cannot be read.
    public static func readKeywords(_ path: String) -> [String] {
        ((try? document(at: path)) ?? nil).map(keywords(in:)) ?? []
    }

    static func keywords(in document: XMPDocument) -> [String] {
        document.list(dcNamespace, "subject")?.items ?? []
    }

    /// Adds and removes keywords in the sidecar at `path`, keeping those another program (or
    /// the files sink's `Keywords`) put there; returns the sidecar's keywords now.
    @discardableResult
    public static func changeKeywords(adding: [String], removing: [String], in path: String) throws(SidecarError) -> [String] {
        var result: [String] = []
        try edit(path) { text throws(SidecarError) in
            var keywords = keywords(in: try parse(text, path))
            keywords += adding.filter { !keywords.contains($0) }
            keywords.removeAll { removing.contains($0) }
            result = keywords
            return try setKeywords(keywords, in: text, path: path)
        }
        return result
    }

    static func setKeywords(_ keywords: [String], in text: String, path: String) throws(SidecarError) -> String {
        let document = try parse(text, path)
        do { return try document.settingList(.dc, "subject", to: .bag(keywords)) } catch {
            throw SidecarError(path: path, reason: "\(error.description); left as it is")
        }
    }

    /// `text` with the simple property `local` of `namespace` set to `value`, or removed for
    /// `nil` (``XMPDocument/setting(_:_:to:)``).
    static func set(_ namespace: XMPNamespace, _ local: String, to value: String?, in text: String, path: String) throws(SidecarError) -> String {
        let document = try parse(text, path)
        do { return try document.setting(namespace, local, to: value) } catch {
            throw SidecarError(path: path, reason: "\(error.description); left as it is")
        }
    }

    static func parse(_ text: String, _ path: String) throws(SidecarError) -> XMPDocument {
        do { return try XMPDocument(text) } catch { throw SidecarError(path: path, reason: "it is not well-formed XML (\(error)); left as it is") }
    }

    /// Reads the sidecar at `path` (or starts an empty one), changes it, and replaces it
    /// durably, holding the folder's lock.
    static func edit(_ path: String, _ change: (String) throws(SidecarError) -> String) throws(SidecarError) {
        let folder = PathName.parent(path)
        let lock = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard lock >= 0 else { throw SidecarError(path: path, reason: String(cString: strerror(errno))) }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 && errno == EINTR {}
        let text = try Self.text(at: path) ?? emptyPacket
        try replaceDurably(path, with: Data(try change(text).utf8))
    }

    /// A new sidecar's packet, before its first property.
    static let emptyPacket = XMPPacket(declaring: [.xmp]).text(wrapped: false)

    /// Replaces the file at `path` with `data` durably (``DurableFile/replace(_:with:mode:)``:
    /// a fresh temporary file beside it, fsync, rename, folder fsync); the caller holds the
    /// folder's lock.
    /// Never through a folder inside the capture folder that was replaced by a link: the
    /// file's folder is opened without following one, and the file replaced in it.
    static func replaceDurably(_ path: String, with data: Data, mode: mode_t = 0o644) throws(SidecarError) {
        let folder = PathName.parent(path)
        let opened = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        let openError = opened < 0 ? errno : 0  // before the checks below change errno
        if let link = ConfinedFolder.linkedFolder(above: path) ?? (openError == ELOOP ? folder : nil) {
            if opened >= 0 { close(opened) }
            throw SidecarError(path: path, reason: "it lies in '\(link)', a symbolic link inside the capture folder, which is never written through; replace the link with the folder it points at", refused: true)
        }
        guard opened >= 0 else { throw SidecarError(path: path, reason: "its folder cannot be opened: \(String(cString: strerror(openError)))") }
        defer { close(opened) }
        let pinned = ConfinedFolder.pinsThroughProc ? "/proc/self/fd/\(opened)/\(PathName.lastComponent(path))" : path
        do throws(SystemError) { try DurableFile.replace(pinned, with: data, mode: mode) } catch {
            throw SidecarError(path: path, reason: error.description.replacingOccurrences(of: "/proc/self/fd/\(opened)", with: folder))
        }
    }
}

/// A sidecar could not be written, or was refused as it was read.
public struct SidecarError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String
    /// Whether it was refused as it was read (a link, a FIFO, too large, not XML).
    public var refused = false

    public init(path: String, reason: String, refused: Bool = false) {
        self.path = path
        self.reason = reason
        self.refused = refused
    }

    public var description: String { "\(refused ? "refused" : "cannot write") the sidecar '\(path)': \(reason)" }
}
