/// What a sink does with a photo's bytes, which decides whether the camera may delete
/// its copy. It may grow (contract 10 on): switch over it with `@unknown default`.
public enum SinkRole: String, Sendable, CaseIterable {
    /// Keeps the bytes of every file of every photo (the `files` sink, an upload to an
    /// archive). Once every archival sink has stored every file of a shot, the backend
    /// may delete it from the camera's card.
    case archival
    /// Only acts on photos (a hook, a manifest, a notification); keeps no copy. A
    /// pipeline whose sinks all only process leaves every shot on the card.
    case processing
}

/// A destination for photos: files on disk, a hook, an upload.
///
/// ## Contract
/// - ``role`` says whether the sink keeps the photo's bytes. It defaults to
///   ``SinkRole/processing``, the safe answer: a sink that does not say keeps no shot
///   from the card. An archival sink's receipt lists every file of the photo (its
///   ``StoredFile/cameraFile``), with the size it has where it was stored; one that
///   misses a file has failed, and the shot stays on the card.
/// - ``store(_:context:)`` returns only when the photo is durably stored: for files,
///   written to a temporary file, fsynced, renamed into place and the folder fsynced.
///   The coordinator answers ``ShutterState/photoSuccess`` on the strength of that
///   return.
/// - On failure, throw a ``ShutterError`` with the right cause
///   (``FailureCause/storageUnavailable`` for a full or unwritable disk) and leave nothing
///   partial behind. The coordinator answers ``ShutterState/photoFailed`` and the backend
///   keeps the photo on the camera.
/// - Never overwrite an existing file.
/// - Calls for one sink come one at a time, in shot order. Never block a thread of the
///   cooperative pool: file I/O with fsync, C calls and programs run on a thread of their
///   own (ShutterPipeSupport's `BlockingQueue`). The conformance kit flags a call that
///   holds a pool thread for seconds.
public protocol PhotoSink: Sendable {
    /// Whether this sink keeps the photos' bytes or only acts on them.
    var role: SinkRole { get }

    /// Stores one photo durably and says where.
    func store(_ photo: CapturedPhoto, context: ShotContext) async throws -> SinkReceipt

    /// Bytes free at the destination, for the status line; `nil` if unknown.
    func availableCapacity() async -> Int64?

    /// A few words for the status line about work after the answers (`upload 3 queued`,
    /// `mirror '/media/usb' away, 12 queued`); `nil` when there is nothing to say. Must
    /// return quickly. (Added in ABI 8.)
    func statusNote() async -> String?

    /// Called once when the pipeline starts, before any event: the place to check that
    /// the sink can work (its destination exists and takes files). A failure stops the
    /// session before its triggers start, with the error's message: a config that cannot
    /// work fails at start, not at the first shot. (Named so it does not hide Glibc's
    /// `open` in sinks.)
    func begin() async throws

    /// Called with every answer the coordinator gives, after it was synced to its trigger
    /// (for sinks that act on the flow, such as hooks), and with the outcome of every shot
    /// taken with the camera's own button (its request's origin is "camera button"). Must
    /// return quickly.
    func observe(_ answer: ShutterAnswer) async

    /// Called once when the pipeline shuts down.
    func end() async
}

extension PhotoSink {
    /// Processing by default: a sink that does not say so keeps no shot from the card.
    public var role: SinkRole { .processing }
    /// Unknown by default.
    public func availableCapacity() async -> Int64? { nil }
    /// Nothing to say by default.
    public func statusNote() async -> String? { nil }
    /// Nothing to begin by default.
    public func begin() async throws {}
    /// Nothing to observe by default.
    public func observe(_ answer: ShutterAnswer) async {}
    /// Nothing to end by default.
    public func end() async {}
}
