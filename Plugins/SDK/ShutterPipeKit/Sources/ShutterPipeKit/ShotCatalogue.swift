import Foundation

/// The session's catalogue, as a plugin reaches it: every shot recorded, across
/// restarts, by its catalogue id, and the photographer's marks on them. The host offers
/// it in ``SessionView/catalogue`` when the session keeps a catalogue (docs/catalogue.md).
/// (Added in ABI 6.)
///
/// ## Contract
/// - Every call may block on a disk: the host runs them on a thread of its own, never on
///   the caller's. They throw a ``ShutterError`` (``FailureCause/storageUnavailable``
///   for a catalogue that cannot be read or written, ``FailureCause/invalidConfiguration``
///   for a shot that does not exist or a mark out of range) whose message names the fix.
/// - A shot is recorded shortly after its answer (within a second when the session is
///   quiet, at most ten seconds into a long burst): ``shot(for:)`` of a shot just taken
///   may be `nil` for that long. Keep the answers you saw for the newest shots.
/// - ``mark(_:_:)`` writes the shot's XMP sidecars first, durably (the photos and their
///   sidecars are the truth), then the catalogue, and returns the shot as it is then.
public protocol ShotCatalogue: Sendable {
    /// The shot with this catalogue id, or `nil`.
    func shot(_ id: Int) async throws -> CatalogueShot?

    /// The shot the session gave this identity, once it is recorded; `nil` before.
    func shot(for shot: ShotID) async throws -> CatalogueShot?

    /// The shots that `filter` selects, newest first (from its `offset`, at most its
    /// `limit`).
    func shots(_ filter: ShotFilter) async throws -> [CatalogueShot]

    /// How many shots `filter` selects, its `offset` and `limit` aside. (Added in ABI 7.)
    func count(_ filter: ShotFilter) async throws -> Int

    /// Changes a shot's marks, in order: sidecars, then the catalogue. Every frame of
    /// the shot gets them.
    func mark(_ id: Int, _ changes: [ShotMarkChange]) async throws -> CatalogueShot

    /// Changes the marks of one frame of a shot: `camera`'s (``CatalogueFrame/camera``),
    /// or every frame for `nil`. Throws ``FailureCause/invalidConfiguration`` for a camera
    /// the shot has no frame of. (Added in contract 9.2; the default marks the whole shot,
    /// and refuses a camera.)
    func mark(_ id: Int, camera: String?, _ changes: [ShotMarkChange]) async throws -> CatalogueShot

    /// Calls `observer` with every change from now on: each shot once it is recorded, and
    /// each change of a shot's marks, whichever trigger, command or page made it. It is
    /// called on the catalogue's thread: return quickly. (Added in ABI 7.)
    func observe(_ observer: @escaping @Sendable (CatalogueChange) -> Void)

    /// Records that a copy of the stored file at `path` (absolute, as a files sink stored
    /// it) was made: a mirror's, an upload's. A copy recorded before its shot is (a fast
    /// mirror) is kept until the shot is. Once per destination: a second record of one
    /// replaces the first. (Added in ABI 8.)
    func recordCopy(of path: String, _ copy: FileCopy) async throws

    /// Records the SHA-256 (lowercase hex) of the stored file at `path` (absolute, as the
    /// sink stored it), computed by the sink that wrote it from the bytes it wrote, so that
    /// the catalogue never reads the photo back for it. A digest that comes before its
    /// shot is recorded waits for it. (Added in contract 9.3.)
    func recordDigest(of path: String, sha256: String) async

    /// A folder beside the catalogue where a plugin may keep files it made from shots
    /// (previews), one sub-folder per plugin name; `nil` when there is none. What is in
    /// it can be made again: the host may empty it.
    var cacheFolder: String? { get }
}

/// A change in the catalogue, as ``ShotCatalogue/observe(_:)`` reports it. (Added in ABI 7.)
public enum CatalogueChange: Sendable {
    /// A shot was recorded: it has its catalogue id from now on.
    case recorded(CatalogueShot)
    /// A shot's marks changed; the shot as it is now.
    case marked(CatalogueShot)
    /// A copy of one of a shot's files was recorded (a mirror's, an upload's); the shot as
    /// it is now. (Added in ABI 8.)
    case copied(CatalogueShot)
}

/// A shot's rating, colour label and pick, as the catalogue and the sidecars hold them.
public struct ShotMarks: Sendable, Equatable, Codable {
    /// 0 (none) to 5.
    public var rating: Int
    /// A colour label ("Red", as Lightroom names them), or `nil`.
    public var label: String?
    /// Picked, rejected, or neither.
    public var pick: Pick

    /// Creates marks.
    public init(rating: Int = 0, label: String? = nil, pick: Pick = .none) {
        self.rating = rating
        self.label = label
        self.pick = pick
    }

    /// These marks with `change` applied. A rating clears a reject, as in Lightroom.
    public func applying(_ change: ShotMarkChange) -> ShotMarks {
        var marks = self
        switch change {
        case .rating(let value):
            marks.rating = value
            if marks.pick == .rejected { marks.pick = .none }
        case .label(let label): marks.label = label
        case .pick(let pick): marks.pick = pick
        case .addKeywords, .removeKeywords: break
        }
        return marks
    }
}

/// One change to a shot's marks. It may grow (contract 10 on): a catalogue refuses a
/// change it does not know.
public enum ShotMarkChange: Sendable, Equatable {
    /// A rating from 0 (none) to 5.
    case rating(Int)
    /// A colour label; `nil` clears it.
    case label(String?)
    /// Pick, reject, or neither.
    case pick(Pick)
    /// Keywords added (`dc:subject` in the sidecar).
    case addKeywords([String])
    /// Keywords removed.
    case removeKeywords([String])

    /// Lightroom's label names for the usual words ("red" → "Red"); `nil` for "none",
    /// "clear", "-" and ""; anything else as given.
    public static func labelName(_ word: String) -> String? {
        let lower = word.lowercased()
        if ["none", "clear", "-", ""].contains(lower) { return nil }
        let known = ["red", "yellow", "green", "blue", "purple"]
        return known.contains(lower) ? lower.prefix(1).uppercased() + lower.dropFirst() : word
    }
}

extension ShotCatalogue {
    /// A catalogue that keeps no copies ignores them.
    public func recordCopy(of path: String, _ copy: FileCopy) async throws {}

    /// A catalogue that keeps no digests, or reads them itself, ignores them.
    public func recordDigest(of path: String, sha256: String) async {}

    /// A catalogue that knows no frames marks whole shots.
    public func mark(_ id: Int, camera: String?, _ changes: [ShotMarkChange]) async throws -> CatalogueShot {
        guard camera == nil else {
            throw ShutterError(.invalidConfiguration, "this catalogue marks whole shots, not the frame of camera '\(camera ?? "")'", fix: "mark the shot without a camera")
        }
        return try await mark(id, changes)
    }
}
