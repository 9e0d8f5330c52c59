/// A plugin that sees the whole session: every answer the coordinator gives, whichever
/// trigger it answers, and every shot taken with the camera's own button. A trigger or a
/// sink adopts it as well; the `web` trigger does, to show every shot on its page.
///
/// ## Contract
/// - ``observe(_:trigger:)`` is called once per answer, after the answering trigger's
///   `sync`, in the order the answers go out. A shot from the camera's own button comes as
///   an answer with `trigger` "camera". A refusal (`busy`) comes too.
/// - ``ShutterAnswer/stored`` holds where each file of a photo went: the stored files are
///   durable by then.
/// - It must return quickly: queue what takes time. The coordinator waits for it.
///
/// (Added within ABI 3: it changes no existing type, so plugins built before it still
/// load; a host from before it never calls it.)
public protocol SessionObserver: Sendable {
    /// Called once as the session starts, before any answer: what it offers (the
    /// backend's live view, its cameras' status).
    func begin(_ session: SessionView) async

    /// Sees one answer; `trigger` is the name of the trigger it answers, or "camera".
    func observe(_ answer: ShutterAnswer, trigger: String) async

    /// Sees a photo as the backend handed it over, before the sinks store it: a display
    /// may start work on its bytes (a preview) while they are written. `shot` is its
    /// number in this run, as in ``ShotInFlight/number``. It must return at once: queue
    /// the work. The bytes are the camera's: decode them within limits. (Added in
    /// contract 9.4.)
    func captured(_ photo: CapturedPhoto, shot: Int) async

    /// Sees a picture the backend showed of shot `shot` before its files were whole
    /// (``BackendContext/show(_:)``): a camera's thumbnail, or a preview decoded as the
    /// bytes came. It may come after the shot's answer (a preview finished a few
    /// milliseconds after the last byte, while the shot was stored): a display then takes
    /// it as the stored photo's preview instead of decoding the photo. It must return at
    /// once. (Added in contract 9.7.)
    func previewed(_ preview: EarlyPreview, shot: Int) async
}

extension SessionObserver {
    /// Nothing to keep by default.
    public func begin(_ session: SessionView) async {}

    /// Nothing to do by default.
    public func captured(_ photo: CapturedPhoto, shot: Int) async {}

    /// Nothing to do by default.
    public func previewed(_ preview: EarlyPreview, shot: Int) async {}
}
