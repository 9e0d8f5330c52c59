import Foundation
import ShutterPipeKit

extension UploadSink {
    /// The options of the `upload` sink.
    public struct Options: Sendable, Equatable {
        /// The rclone destination folder: a remote of rclone's config and a path
        /// (`studio-sftp:clients/acme`), or an inline remote (`:webdav,url=…:shots`).
        /// `{session}` and `{date}` (YYYY-MM-DD, the day the shot was stored) are replaced.
        public var remote = ""
        /// rclone's config file; `nil`: rclone's own default.
        public var rcloneConfig: String?
        /// Which files of a shot go: `all`, `jpeg` (JPEG and HEIF), `raw`.
        public var files = "all"
        /// rclone's `--bwlimit` (`4M`, `500k`, or a timetable); `nil`: no limit.
        public var bandwidth: String?
        /// How long one file's upload may take before it is stopped and tried again.
        public var timeout: Duration = .seconds(600)
        /// Where the queue's journal and spooled files are kept; `nil`:
        /// `$XDG_STATE_HOME/shutterpipe/uploads`, else `~/.local/state/shutterpipe/uploads`.
        public var queueFolder: String?
        /// The program: `rclone` on PATH, or a path.
        public var rclone = "rclone"
        /// Upload a shot only once it is rated at least this (1–5); 0: every shot, at once.
        public var minRating = 0
        /// Upload a shot only once it is picked.
        public var picksOnly = false

        /// Whether shots wait for the photographer's marks before they go.
        var waitsForMarks: Bool { minRating > 0 || picksOnly }

        public init() {}

        static let rawExtensions: Set<String> = ["3fr", "arw", "cr2", "cr3", "crw", "dcr", "dng", "erf", "iiq", "kdc", "mef", "mos", "mrw",
                                                  "nef", "nrw", "orf", "pef", "raf", "raw", "rw2", "rwl", "sr2", "srf", "srw", "x3f"]
        static let jpegExtensions: Set<String> = ["jpg", "jpeg", "heic", "heif", "hif"]

        /// Whether a file with this extension (lower case) is one `files` selects.
        func selects(extension ext: String) -> Bool {
            switch files {
            case "jpeg": Self.jpegExtensions.contains(ext)
            case "raw": Self.rawExtensions.contains(ext)
            default: true
            }
        }
    }
}

extension UploadSink.Options {
    /// Reads the options of an `upload` sink.
    public init(_ options: PluginOptions) throws {
        self.init()
        guard let remote = try options.string("remote"), !remote.isEmpty else {
            throw options.error("an upload sink needs 'remote': an rclone remote and folder, such as studio-sftp:clients/acme (see `rclone config`)", key: "remote")
        }
        // The value may hold secrets (an inline remote's pass=): it is never repeated back.
        guard RcloneRemote.parse(remote) != nil else {
            throw options.error("'remote' must name an rclone remote, such as studio-sftp:clients/acme or :webdav,url=https://example.com:shots; this one has no ':' outside quotes", key: "remote")
        }
        self.remote = remote
        rcloneConfig = try options.path("rcloneConfig")
        files = try options.choice("files", from: ["all", "jpeg", "raw"], default: files)
        bandwidth = try options.string("bandwidth")
        timeout = try options.duration("timeout", default: timeout)
        queueFolder = try options.path("queueFolder")
        rclone = try options.string("rclone", default: rclone)
        minRating = try options.int("minRating", default: minRating, in: 0...5)
        picksOnly = try options.bool("picksOnly", default: picksOnly)
    }
}
