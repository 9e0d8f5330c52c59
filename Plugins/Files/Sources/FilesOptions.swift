import Foundation
import ShutterPipeKit
import ShutterPipeSupport

extension FilesSink {
    /// The options of the `files` sink.
    public struct Options: Sendable, Equatable {
        /// The output folder, a template (`~/Shoots/{session}`).
        public var directory: PlaceholderTemplate
        /// The file name inside it, a template that may hold sub-folders.
        public var filename: PlaceholderTemplate
        /// The metadata to write, if any.
        public var exif: ExifOptions?
        /// When an XMP sidecar is written (with `exif` only).
        public var sidecars: SidecarPolicy = .auto
        /// How sidecars are named (the contract's ``SidecarNaming``, which the catalogue
        /// reads through ``PhotoArchive``).
        public var sidecarName: SidecarNaming = .append
        /// Free space below which the session warns at start, in bytes.
        public var minFreeSpace: Int64 = 2_000_000_000
        /// Folders that get a checked copy of every stored file, after the shot is
        /// answered (``MirrorQueue``), in the same layout as under `directory`.
        public var mirrors: [String] = []

        /// When to write an XMP sidecar next to a stored file.
        public enum SidecarPolicy: String, Sendable, CaseIterable {
            /// For files that cannot carry our metadata themselves: RAW, HEIF, PNG,
            /// damaged JPEGs, and JPEGs whose camera XMP and EXIF left no safe place.
            case auto
            /// For every file, JPEGs included.
            case always
            /// Never.
            case never
        }

        /// The defaults: `./captures` and `{session}-{seq:04}.{ext}`.
        public init(directory: String = "./captures", filename: String = "{session}-{seq:04}.{ext}") throws(TemplateError) {
            self.directory = try PlaceholderTemplate(directory)
            self.filename = try PlaceholderTemplate(filename)
            try self.filename.checkStaysInside()
        }
    }
}

extension FilesSink.Options {
    /// Reads the options of a `files` sink.
    public init(_ options: PluginOptions) throws {
        let directory = try options.string("directory", default: "./captures")
        let filename = try options.string("filename", default: "{session}-{seq:04}.{ext}")
        do {
            _ = try PlaceholderTemplate(directory)
        } catch {
            throw options.error("'directory': \(error)", key: "directory")
        }
        do {
            try self.init(directory: directory, filename: filename)
        } catch {
            throw options.error("'filename': \(error)", key: "filename")
        }
        exif = try options.section("exif").map(ExifOptions.init)
        sidecars = SidecarPolicy(rawValue: try options.choice("sidecars", from: SidecarPolicy.allCases.map(\.rawValue), default: sidecars.rawValue))!
        sidecarName = SidecarNaming(rawValue: try options.choice("sidecarName", from: SidecarNaming.allCases.map(\.rawValue), default: sidecarName.rawValue))!
        if let text = try options.string("minFreeSpace") {
            if let bytes = parseByteCount(text) {
                minFreeSpace = bytes
            } else {
                // Reported with the other mistakes; the default stands meanwhile.
                options.record(options.error("'minFreeSpace' must be a size such as 500MB or 2GB; got '\(text)'", key: "minFreeSpace"))
            }
        }
        mirrors = try options.stringList("mirror")
        let primary = FilesSink.staticPrefix(of: self.directory)
        for mirror in mirrors {
            let expanded = PluginOptions.expandingTilde(mirror)
            if mirror.contains("{") || expanded.isEmpty {
                options.record(options.error("'mirror': '\(mirror)' must be a folder (no placeholders: the photos keep their layout under it)", key: "mirror"))
            } else if (expanded + "/").hasPrefix(primary + "/") || (primary + "/").hasPrefix(expanded + "/") {
                options.record(options.error("'mirror': '\(mirror)' is inside the capture folder '\(primary)', or holds it: a mirror is another disk", key: "mirror"))
            }
        }
    }

}
