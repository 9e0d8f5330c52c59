import Foundation
import ShutterPipeKit
import ShutterPipeSupport

extension HotFolderBackend {
    /// The options of the `hotfolder` backend.
    public struct Options: Sendable, Equatable {
        /// The folder watched (not its sub-folders).
        public var folder = ""
        /// How long a file's size must stay the same before it is taken, for writers that
        /// do not close it when done (a file closed after writing, or renamed into the
        /// folder, is taken at once).
        public var settle: Duration = .seconds(2)
        /// What becomes of a file once every sink stored it: `leave` it (recorded, never
        /// taken again), `move` it into ``doneFolder``, or `delete` it.
        public var originals = "leave"
        /// Where `move` puts them; `nil`: `ingested` inside the folder.
        public var doneFolder: String?
        /// The extensions taken (lower case, without the dot).
        public var extensions: Set<String> = Options.imageExtensions
        /// The camera name for logs and `{camera}`.
        public var camera = "hotfolder"
        /// The largest file taken, in bytes: a larger one is refused by name in the log.
        /// 500 MB is twice the largest camera file (a 150 MP Phase One IIQ is about
        /// 250 MB); a scanner's uncompressed TIFFs may need more.
        public var maxFileSize: Int64 = 500_000_000
        /// The bytes read from the folder and not yet stored by every sink, at most: past
        /// it, the next file waits until earlier ones are stored (one file always goes).
        public var maxBuffered: Int64 = 1_000_000_000

        public init() {}

        public static let imageExtensions: Set<String> = [
            "jpg", "jpeg", "heic", "heif", "hif", "tif", "tiff", "png", "dng", "cr2", "cr3", "nef", "nrw", "arw", "raf", "orf", "rw2",
            "pef", "srw", "x3f", "3fr", "iiq", "erf",
        ]

        /// Where moved originals go.
        var movedTo: String { doneFolder ?? "\(folder)/ingested" }
    }
}

extension HotFolderBackend.Options {
    /// Reads the options of a `hotfolder` backend.
    public init(_ options: PluginOptions) throws {
        self.init()
        guard let folder = try options.path("folder") else {
            throw options.error("a hotfolder backend needs 'folder': the folder other programs write photos into, such as ~/Incoming", key: "folder")
        }
        self.folder = folder
        settle = try options.duration("settle", default: settle)
        originals = try options.choice("originals", from: ["leave", "move", "delete"], default: originals)
        doneFolder = try options.path("doneFolder")
        let listed = try options.stringList("extensions")
        if !listed.isEmpty { extensions = Set(listed.map { $0.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: ".")) }) }
        camera = try options.string("camera", default: camera)
        maxFileSize = try Self.size("maxFileSize", options, default: maxFileSize)
        maxBuffered = try Self.size("maxBuffered", options, default: maxBuffered)
    }

    /// A size option (`500MB`, `2GB`), at least 1 MB.
    private static func size(_ key: String, _ options: PluginOptions, default value: Int64) throws -> Int64 {
        guard let text = try options.string(key) else { return value }
        guard let bytes = parseByteCount(text), bytes >= 1_000_000 else {
            throw options.error("'\(key)' must be a size of at least 1MB, such as 500MB or 2GB; got '\(text)'", key: key)
        }
        return bytes
    }
}
