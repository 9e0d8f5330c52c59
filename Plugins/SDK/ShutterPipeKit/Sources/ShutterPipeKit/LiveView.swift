import Foundation

/// A backend that can show what the camera sees: live view, frames on demand. A backend
/// adopts it besides ``CaptureBackend``; plugins reach it through ``SessionView``.
///
/// ## Contract
/// - ``liveViewFrame()`` returns the next frame, a JPEG. The first call starts live view
///   (where the camera needs that); it may come at any time, also while a capture runs:
///   the backend serialises the two, the capture first, and frames resume after it.
/// - Throw a ``ShutterError`` when there is no frame to give (the camera is not open:
///   ``FailureCause/notInPhotoMode``; it went away: ``FailureCause/cameraFailure``).
/// - A camera that has no live view at all: throw ``LiveViewUnavailable``, once it is known,
///   and at once on every later call (no camera round trip). Viewers then stop asking
///   and say why.
/// - ``stopLiveView()`` comes when nobody watches any more.
public protocol LiveViewSource: Sendable {
    /// The next frame, a JPEG.
    func liveViewFrame() async throws -> Data

    /// Nobody watches live view any more.
    func stopLiveView() async
}

/// A backend with several cameras, each with a live view of its own (a rig). Viewers ask
/// each camera by its name in the pipeline. (Added in ABI 7; a plugin built against an
/// earlier 7 that does not adopt it is unchanged.)
///
/// ## Contract
/// - ``liveViewCameras`` names the cameras, in the pipeline's order; the first is the one
///   ``LiveViewSource/liveViewFrame()`` gives.
/// - ``liveViewFrame(camera:)`` follows ``LiveViewSource/liveViewFrame()``'s contract for
///   that camera alone: one camera's frames never wait for another's capture or frames,
///   and one camera without live view (``LiveViewUnavailable``) says nothing of the
///   others. A name not in the list: ``ShutterError`` with
///   ``FailureCause/invalidConfiguration``.
/// - ``stopLiveView(camera:)`` comes when nobody watches that camera any more.
public protocol CameraLiveViewSource: LiveViewSource {
    /// The cameras' names, in the pipeline's order.
    var liveViewCameras: [String] { get }

    /// The next frame of `camera`, a JPEG.
    func liveViewFrame(camera: String) async throws -> Data

    /// Nobody watches `camera` any more.
    func stopLiveView(camera: String) async
}

/// The camera cannot give live view at all (it has none, or its driver cannot reach it):
/// not a passing failure, so nobody should ask again this session. (Added in ABI 7.)
public struct LiveViewUnavailable: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why, for people: "camera 'left' (PTP/IP Camera) has no live view (…)".
    public var reason: String

    /// Creates the error.
    public init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}

extension LiveViewSource {
    /// Nothing to stop by default.
    public func stopLiveView() async {}
}

/// What a session offers the plugins that observe it (``SessionObserver/begin(_:)``).
public struct SessionView: Sendable {
    /// The backend's live view, when it has one.
    public let liveView: (any LiveViewSource)?
    /// Each camera's status (battery, free card space), as the backend reports it.
    public let cameras: @Sendable () async -> [CameraStatus]
    /// The session's catalogue, when it keeps one (`catalogue: off` keeps none). (Added
    /// in ABI 6.)
    public let catalogue: (any ShotCatalogue)?
    /// The shots in flight now, as the terminal's status line shows them (capturing,
    /// downloading so far, storing): read it as often as a display needs; it never waits
    /// for the coordinator. Empty when nothing is in flight. (Added in contract 9.2.)
    public var shotsInFlight: @Sendable () -> [ShotInFlight] = { [] }
    /// Registers a function that hears (on any thread, without waiting for it) each time
    /// the shots in flight change: a shot begins, changes phase, ends, or gets an early
    /// preview; not each downloaded byte. A display reads ``shotsInFlight`` then, instead
    /// of asking on a timer. (Added in contract 9.4.)
    public var observeShotsInFlight: @Sendable (@escaping @Sendable () -> Void) -> Void = { _ in }
    /// The names of the sequences the config plans (``SequenceRequest``), sorted: what a
    /// display may offer to run. (Added in contract 9.4.)
    public var sequences: [String] = []

    /// Creates a view. The coordinator makes these; tests can make their own.
    public init(liveView: (any LiveViewSource)?, cameras: @escaping @Sendable () async -> [CameraStatus],
                catalogue: (any ShotCatalogue)? = nil) {
        self.liveView = liveView
        self.cameras = cameras
        self.catalogue = catalogue
    }

    /// Creates a view with the shots in flight. (Added in contract 9.2.)
    public init(liveView: (any LiveViewSource)?, cameras: @escaping @Sendable () async -> [CameraStatus],
                catalogue: (any ShotCatalogue)?, shotsInFlight: @escaping @Sendable () -> [ShotInFlight]) {
        self.init(liveView: liveView, cameras: cameras, catalogue: catalogue)
        self.shotsInFlight = shotsInFlight
    }
}

/// A shot in flight, for a display: what it is doing and how far it came. (Added in
/// contract 9.2.)
public struct ShotInFlight: Sendable, Equatable {
    /// What the shot is doing. New phases may come in later contracts: handle
    /// `@unknown default`.
    public enum Phase: String, Sendable, Equatable {
        /// The camera is exposing (or nothing is downloaded yet).
        case capturing
        /// Its files are coming from the camera.
        case downloading
        /// The sinks are storing it.
        case storing
    }

    /// The shot's number in this run.
    public var number: Int
    public var phase: Phase
    /// Seconds since the shot began.
    public var seconds: Double
    /// Bytes downloaded so far, and the announced total when every file's is known.
    public var bytes: Int64
    public var total: Int64?
    /// The latest picture the backend showed of it before its files were whole
    /// (``BackendContext/show(_:)``). (Added in contract 9.4.)
    public var preview: EarlyPreview?

    public init(number: Int, phase: Phase, seconds: Double, bytes: Int64 = 0, total: Int64? = nil) {
        self.number = number
        self.phase = phase
        self.seconds = seconds
        self.bytes = bytes
        self.total = total
    }
}
