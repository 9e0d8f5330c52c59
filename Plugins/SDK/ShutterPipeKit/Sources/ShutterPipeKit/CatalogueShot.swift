import Foundation

// The catalogue as plugins see it: what a shot is, once recorded, and how to reach the
// session's catalogue (``ShotCatalogue``, offered in ``SessionView/catalogue``). The
// catalogue itself (SQLite, sidecars) is the host's. (Added in ABI 6.)

/// What a stored file is, from its extension.
public enum FileKind: String, Sendable, Codable, CaseIterable {
    case raw = "RAW"
    case jpeg = "JPEG"
    case heif = "HEIF"
    case tiff = "TIFF"

    /// The kind of a file named `path`, or `nil` for what is not a photo (a sidecar, a
    /// manifest).
    public static func of(_ path: String) -> FileKind? {
        let name = String(decoding: CapturedFile.lastComponent(path), as: UTF8.self)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let ext = name[name.index(after: dot)...].lowercased()
        if ["jpg", "jpeg", "jpe"].contains(ext) { return .jpeg }
        if ["heic", "heif", "hif", "avif"].contains(ext) { return .heif }
        if ["tif", "tiff"].contains(ext) { return .tiff }
        if rawExtensions.contains(ext) { return .raw }
        return nil
    }

    /// Extensions of the RAW formats cameras write.
    static let rawExtensions: Set<String> = [
        "cr2", "cr3", "crw", "nef", "nrw", "arw", "srf", "sr2", "dng", "raf", "orf", "rw2", "pef", "srw", "3fr", "iiq", "x3f",
        "erf", "mef", "mos", "mrw", "kdc", "dcr", "rwl",
    ]
}

/// How a shot ended.
public enum ShotState: String, Sendable, Codable {
    /// Every file stored (`photoSuccess`).
    case stored
    /// Answered `photoFailed` (`failureCause` says why).
    case failed
    /// Found on disk without a record: shot before a crash, or in a folder shot elsewhere.
    case imported
}

/// A pick flag: Lightroom's pick and reject, CaptureGRID's.
///
/// Closed (`@frozen`): XMP's pick is -1, 0 or 1 in every editor that writes it.
@frozen public enum Pick: Int, Sendable, Codable {
    case rejected = -1
    case none = 0
    case picked = 1

    /// "picked", "rejected" or nil, for JSON and tables.
    public var word: String? {
        switch self {
        case .rejected: return "rejected"
        case .none: return nil
        case .picked: return "picked"
        }
    }

    /// "picked" (or "pick"), "rejected" (or "reject"), "none"; `nil` for anything else.
    /// (Added in ABI 7.)
    public init?(word: String) {
        switch word.lowercased() {
        case "picked", "pick": self = .picked
        case "rejected", "reject": self = .rejected
        case "none": self = .none
        default: return nil
        }
    }
}

/// One file of a shot, as recorded.
public struct CatalogueFile: Sendable, Equatable, Codable {
    /// Its path: absolute, as the files sink wrote it.
    public var path: String
    /// Its size in bytes when recorded.
    public var size: Int
    /// RAW, JPEG, HEIF or TIFF.
    public var kind: FileKind
    /// Its SHA-256, in hex.
    public var sha256: String?
    /// The camera's name for it ("IMG_0042.CR2"), when the camera named it.
    public var cameraFile: String?
    /// Not on disk at the last check.
    public var missing: Bool
    /// The copies made of it after its answer (mirrors, uploads), as the sinks that made
    /// them recorded them (``ShotCatalogue/recordCopy(of:_:)``). (Added in ABI 8.)
    public var copies: [FileCopy] = []
    /// The camera that made it, by its name in the config, when the session drives
    /// several: its shot's frame (``CatalogueFrame``). `nil` for a session's only camera.
    /// (Added in contract 9.2.)
    public var camera: String?

    public init(path: String, size: Int, kind: FileKind, sha256: String? = nil, cameraFile: String? = nil, missing: Bool = false) {
        self.path = path
        self.size = size
        self.kind = kind
        self.sha256 = sha256
        self.cameraFile = cameraFile
        self.missing = missing
    }
}

/// A copy of a stored file made after the shot's answer: a mirror's, an upload's.
/// (Added in ABI 8.)
public struct FileCopy: Sendable, Equatable, Codable {
    /// Where it went: a mirror folder, an rclone remote (its secrets left out).
    public var destination: String
    /// The copy itself: its path or URL, or a public link; `nil` when only the
    /// destination is known.
    public var location: String?
    /// When it was made and checked.
    public var time: Date

    public init(destination: String, location: String? = nil, time: Date = Date()) {
        self.destination = destination
        self.location = location
        self.time = time
    }
}

/// A shot as the catalogue holds it, with its id.
public struct CatalogueShot: Sendable, Equatable, Codable {
    /// The id: unique in this catalogue, kept across restarts.
    public var id: Int
    /// The session's name and the catalogue's number for that run of it.
    public var session: String?
    public var sessionRun: Int?
    /// The identity the session gave the shot; `nil` for an imported one.
    public var shotID: ShotID?
    public var runNumber: Int?
    public var trigger: String?
    public var camera: String?
    public var cameraPort: String?
    public var asked: Date?
    public var fired: Date?
    public var stored: Date?
    public var state: ShotState
    public var failureCause: String?
    public var failureMessage: String?
    public var exif: ExifSummary
    public var rating: Int
    public var label: String?
    public var pick: Pick
    public var keywords: [String]
    public var files: [CatalogueFile]
    /// The session label the shot was taken under (``ShotContext/label``): an order
    /// number, a scanned code; not the colour ``label``. (Added in ABI 8.)
    public var sessionLabel: String?
    /// Its frames: what each camera took of it, with that frame's own marks, in the
    /// order the cameras delivered them. A shot of one camera has one frame, whose marks
    /// are the shot's. (Added in contract 9.2.)
    public var frames: [CatalogueFrame] = []
    /// Its place in a sequence, when one took it; nil for a shot of its own. (Added in
    /// contract 9.6.)
    public var sequence: CatalogueSequencePlace? = nil

    /// Creates a shot as a catalogue holds it.
    public init(id: Int, session: String?, sessionRun: Int?, shotID: ShotID?, runNumber: Int?, trigger: String?, camera: String?,
                cameraPort: String?, asked: Date?, fired: Date?, stored: Date?, state: ShotState, failureCause: String?,
                failureMessage: String?, exif: ExifSummary, rating: Int, label: String?, pick: Pick, keywords: [String],
                files: [CatalogueFile]) {
        self.id = id
        self.session = session
        self.sessionRun = sessionRun
        self.shotID = shotID
        self.runNumber = runNumber
        self.trigger = trigger
        self.camera = camera
        self.cameraPort = cameraPort
        self.asked = asked
        self.fired = fired
        self.stored = stored
        self.state = state
        self.failureCause = failureCause
        self.failureMessage = failureMessage
        self.exif = exif
        self.rating = rating
        self.label = label
        self.pick = pick
        self.keywords = keywords
        self.files = files
    }

    /// The moment the shot is sorted and filtered by: fired, else stored, else asked.
    public var moment: Date? { fired ?? stored ?? asked }

    /// Its rating, label and pick. For a shot of several frames, they sum its frames'
    /// up: the highest rating of a frame not rejected, picked when a frame is, rejected
    /// when every frame is, and the first label a frame has.
    public var marks: ShotMarks { ShotMarks(rating: rating, label: label, pick: pick) }

    /// The frame of `camera` (`nil`: the frame of a session's only camera), if the shot
    /// has one. (Added in contract 9.2.)
    public func frame(_ camera: String?) -> CatalogueFrame? {
        frames.first { $0.camera == camera }
    }

    /// The files of `camera`'s frame. (Added in contract 9.2.)
    public func files(of camera: String?) -> [CatalogueFile] {
        files.filter { $0.camera == camera }
    }
}

/// What one camera took of a shot: a RAW+JPEG pair, a JPEG. Each frame of a shot of
/// several cameras is seen, compared and marked on its own; a mark of the whole shot marks
/// every frame. (Added in contract 9.2.)
public struct CatalogueFrame: Sendable, Equatable, Codable {
    /// The camera, by its name in the config; `nil` for a session's only camera.
    public var camera: String?
    /// 0 (none) to 5.
    public var rating: Int
    /// A colour label ("Red"), or `nil`.
    public var label: String?
    /// Picked, rejected, or neither.
    public var pick: Pick

    public init(camera: String?, rating: Int = 0, label: String? = nil, pick: Pick = .none) {
        self.camera = camera
        self.rating = rating
        self.label = label
        self.pick = pick
    }

    /// Its rating, label and pick.
    public var marks: ShotMarks { ShotMarks(rating: rating, label: label, pick: pick) }

    /// The marks of a shot whose frames have `marks`: the highest rating of a frame not
    /// rejected, picked when any frame is, rejected when all are, the first label.
    public static func summary(of marks: [ShotMarks]) -> ShotMarks {
        guard marks.count > 1 else { return marks.first ?? ShotMarks() }
        let kept = marks.filter { $0.pick != .rejected }
        let pick: Pick = marks.contains { $0.pick == .picked } ? .picked : kept.isEmpty ? .rejected : .none
        return ShotMarks(rating: kept.map(\.rating).max() ?? marks.map(\.rating).max() ?? 0, label: marks.lazy.compactMap(\.label).first, pick: pick)
    }
}

/// Which shots to list.
public struct ShotFilter: Sendable {
    /// Closed (`@frozen`): the five order comparisons; "not" is written as two filters.
    @frozen public enum Comparison: String, Sendable { case equal = "=", atLeast = ">=", atMost = "<=", above = ">", below = "<" }
    public var session: String?
    public var camera: String?
    public var rating: (Comparison, Int)?
    public var label: String?
    /// Only shots taken under this session label. (Added in ABI 8.)
    public var sessionLabel: String?
    public var keyword: String?
    /// Only the frames of this sequence (its name in the config). (Added in contract 9.6.)
    public var sequence: String? = nil
    /// One shot per run of a sequence (its first frame), beside every shot of no sequence:
    /// a grid that collapses groups. (Added in contract 9.6.)
    public var collapseSequences = false
    public var pickedOnly = false
    public var rejectedOnly = false
    public var failedOnly = false
    public var since: Date?
    /// At most this many shots.
    public var limit: Int?
    /// Skips this many of the newest first (a page of a long list). (Added in ABI 7.)
    public var offset: Int?

    public init() {}

    /// Reads "'>=3'", "3", "<2" into a comparison.
    public static func parseRating(_ text: String) -> (Comparison, Int)? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        for comparison in [Comparison.atLeast, .atMost, .equal, .above, .below] where trimmed.hasPrefix(comparison.rawValue) {
            guard let value = Int(trimmed.dropFirst(comparison.rawValue.count).trimmingCharacters(in: .whitespaces)), (-1...5).contains(value) else { return nil }
            return (comparison, value)
        }
        guard let value = Int(trimmed), (-1...5).contains(value) else { return nil }
        return (.equal, value)
    }
}
