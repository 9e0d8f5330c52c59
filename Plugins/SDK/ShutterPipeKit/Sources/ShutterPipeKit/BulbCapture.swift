/// A backend that holds the shutter open for as long as it is told: a bulb exposure.
/// (Added in contract 10.1.) Declare it with ``PluginAbility/bulbCapture``.
///
/// A sequence of kind `bulb` (and nothing else) asks for it. The backend opens the
/// shutter with the camera's own bulb control, keeps it open for `exposure` timed on the
/// monotonic clock (from the moment the camera took the open, so that it is never
/// short), closes it, and returns the exposure's files as ``CaptureBackend/capture()`` does.
///
/// Once opened, the shutter is closed whatever happens, cancellation included: a
/// sequence is cancelled between frames, never inside an exposure. A close that fails
/// throws at once, saying the shutter may still be open. A camera without a bulb control
/// throws a ``ShutterError`` naming the camera and what it lacks.
public protocol BulbCapture: Sendable {
    /// Takes one exposure held open for `exposure`.
    func captureBulb(for exposure: Duration) async throws -> CapturedPhoto
}
