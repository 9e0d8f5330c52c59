import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// Where the sink keeps photos: the folder before its template's placeholders, which the
/// catalogue indexes (``PhotoArchive``) and the mirrors copy in the same layout.
extension FilesSink {
    /// Where the photos go, for the catalogue: the folder before any placeholder, and the
    /// sidecars' naming.
    public var archive: ArchiveLayout {
        ArchiveLayout(folder: Self.fixedFolder(of: options.directory), sidecarNaming: options.sidecarName)
    }

    /// The part of a `directory` template before its first placeholder, as a folder (`~`
    /// expanded); `nil` when that is nothing or `/` (no folder of the sink's alone).
    static func fixedFolder(of directory: PlaceholderTemplate) -> String? {
        let text = PluginOptions.expandingTilde(directory.text)
        guard let brace = text.firstIndex(of: "{") else { return text }
        let before = String(text[..<brace])
        let folder = before.hasSuffix("/") ? String(before.dropLast()) : PathName.parent(before)
        return folder.isEmpty || folder == "/" ? nil : folder
    }

    /// The folder of `directory` before its first placeholder (`./captures` for
    /// `./captures/{session}`): what mirrors mirror, in the same layout.
    static func staticPrefix(of directory: PlaceholderTemplate) -> String {
        fixedFolder(of: directory) ?? (PluginOptions.expandingTilde(directory.text).hasPrefix("/") ? "/" : ".")
    }
}
