/// A destination for photos: files on disk, a hook, an upload.
///
/// ## Contract
/// - ``store(_:context:)`` returns only when the photo is durably stored: for files,
///   written to a temporary file, fsynced, renamed into place and the folder fsynced.
///   The coordinator answers ``ShutterState/photoSuccess`` on the strength of that
///   return.
/// - On failure, throw a ``ShutterError`` with the right cause
///   (``FailureCause/storageUnavailable`` for a full or unwritable disk) and leave nothing
///   partial behind. The coordinator answers ``ShutterState/photoFailed`` and the backend
///   keeps the photo on the camera.
/// - Never overwrite an existing file.
/// - Calls for one sink come one at a time, in shot order. Blocking I/O is fine inside
///   `store` for the short writes of a photo; anything that can block indefinitely
///   belongs on a thread of its own.
public protocol PhotoSink: Sendable {
    /// Stores one photo durably and says where.
    func store(_ photo: CapturedPhoto, context: ShotContext) async throws -> SinkReceipt

    /// Bytes free at the destination, for the status line; `nil` if unknown.
    func availableCapacity() async -> Int64?

    /// Called once when the pipeline starts, before any event. A failure is logged and
    /// the sink still gets the photos. (Named so it does not hide Glibc's `open` in sinks.)
    func begin() async throws

    /// Called with every answer the coordinator gives, after it was synced to its trigger
    /// (for sinks that act on the flow, such as hooks). Must return quickly.
    func observe(_ answer: ShutterAnswer) async

    /// Called once when the pipeline shuts down.
    func end() async
}

extension PhotoSink {
    /// Unknown by default.
    public func availableCapacity() async -> Int64? { nil }
    /// Nothing to begin by default.
    public func begin() async throws {}
    /// Nothing to observe by default.
    public func observe(_ answer: ShutterAnswer) async {}
    /// Nothing to end by default.
    public func end() async {}
}
