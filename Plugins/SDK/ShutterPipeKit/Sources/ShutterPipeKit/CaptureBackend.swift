import Foundation

/// A camera, or anything that produces photos on request.
///
/// ## Contract
/// - The coordinator calls `prepare`, then any number of `capture`s, each followed by its
///   `finish`, then `stop`; after `stop`, `prepare` may come again. `prepare` and `stop`
///   never overlap any other call, and captures never overlap each other. One overlap
///   happens in bursts: the `finish` of a photo may come while the next `capture` runs
///   (the sinks store a photo while the camera takes the next). A backend that drives one
///   device serialises the two itself, as the gphoto2 backend's queue does.
/// - ``prepare(_:)`` runs on `enter`. Throw a ``ShutterError``: the coordinator answers
///   ``ShutterState/exitedOrUnableToEnter`` with its cause (``FailureCause/noCamera``,
///   ``FailureCause/permissionDenied``, …).
/// - ``capture()`` takes one exposure and returns all its files: with several cameras,
///   every camera's, fired at the same moment. When some cameras failed and others
///   delivered, return what came with ``CapturedPhoto/missing`` set: it is stored, and the
///   answer is ``ShutterState/photoFailed`` naming the cameras that failed. Throw a
///   ``ShutterError``: the coordinator answers ``ShutterState/photoFailed`` with its cause
///   (``FailureCause/cameraFailure``, ``FailureCause/storageUnavailable`` for a full card,
///   …). The coordinator puts a deadline on it and cancels the task when it passes, so
///   honour cancellation. Blocking C calls run on a thread of their own, never on the
///   cooperative pool.
/// - ``finish(_:stored:)`` comes after every sink has seen the photo, and after its
///   answer went out (a slow delete never delays the answer): `stored` is true
///   only when the photo is archived, that is no sink failed and every archival sink
///   (``SinkRole/archival``; there is at least one) stored every file of it durably.
///   Delete from the card only then: a pipeline with only processing sinks (a hook, a
///   manifest) keeps every shot on the card.
/// - Photos the camera takes by itself (its own shutter button) are handed to
///   ``BackendContext/deliver(_:)``; the coordinator sends them to the sinks and then
///   calls ``finish(_:stored:)`` for them too.
public protocol CaptureBackend: Sendable {
    /// The camera's name for logs and templates ("Nikon D750", "file-stub").
    var cameraName: String { get async }

    /// Opens the camera and checks that it can capture.
    func prepare(_ context: BackendContext) async throws

    /// Takes one photo and returns every file of the exposure.
    func capture() async throws -> CapturedPhoto

    /// Takes one photo at `moment` (wall clock, ``TriggerEvent/fireAt``), no earlier; at
    /// once when it is `nil` or past. Set ``CapturedPhoto/captureTime`` to when the shutter
    /// was fired. The default waits with `Task.sleep`, then calls ``capture()``: within a
    /// millisecond or so on an idle machine. A backend that can wait on the thread that
    /// fires (a camera thread) does better: the rig's spread is this wait's precision.
    /// (Added in ABI 4.)
    func capture(at moment: Date?) async throws -> CapturedPhoto

    /// Called once per photo after the sinks: `stored` says whether the photo is archived,
    /// so the camera's copy may go.
    func finish(_ photo: CapturedPhoto, stored: Bool) async

    /// Leaves photo mode and releases the camera.
    func stop() async

    /// What each camera reports about itself (battery, free card space), for status
    /// displays; empty when unknown. Must return quickly and never fail.
    func status() async -> [CameraStatus]
}

extension CaptureBackend {
    /// Waits for `moment` with `Task.sleep`, then calls ``capture()``.
    public func capture(at moment: Date?) async throws -> CapturedPhoto {
        if let moment, moment.timeIntervalSinceNow > 0 {
            try await Task.sleep(for: .nanoseconds(Int64(moment.timeIntervalSinceNow * 1_000_000_000)))
        }
        return try await capture()
    }

    /// Does nothing: backends that keep nothing on a camera need no clean-up.
    public func finish(_ photo: CapturedPhoto, stored: Bool) async {}

    /// Unknown by default.
    public func status() async -> [CameraStatus] { [] }
}

/// What a camera reports about itself.
public struct CameraStatus: Sendable, Equatable {
    /// The camera's name in the config, when a backend drives several.
    public var name: String?
    /// The battery level as the camera words it ("87%", "Full").
    public var battery: String?
    /// Free space on the camera's card, in bytes.
    public var freeCardBytes: Int64?
    /// Whether the camera is connected now (`false` during an outage).
    public var connected: Bool

    /// Creates a status.
    public init(name: String? = nil, battery: String? = nil, freeCardBytes: Int64? = nil, connected: Bool = true) {
        self.name = name
        self.battery = battery
        self.freeCardBytes = freeCardBytes
        self.connected = connected
    }
}

/// What the coordinator gives a backend on ``CaptureBackend/prepare(_:)``.
public struct BackendContext: Sendable {
    let deliverPhoto: @Sendable (CapturedPhoto) -> Void
    let reportProgress: @Sendable (DownloadProgress) -> Void
    /// Hears ``show(_:)`` (added in contract 9.4).
    var showPreview: @Sendable (EarlyPreview) -> Void = { _ in }
    /// The backend's logger.
    public let log: Logger

    /// Creates a context. The coordinator makes these; tests of a backend can make their
    /// own. `progress` hears ``report(_:)``.
    public init(log: Logger, deliver: @escaping @Sendable (CapturedPhoto) -> Void,
                progress: @escaping @Sendable (DownloadProgress) -> Void = { _ in }) {
        self.log = log
        self.deliverPhoto = deliver
        self.reportProgress = progress
    }

    /// Creates a context that also hears early previews (``show(_:)``). (Added in
    /// contract 9.4.)
    public init(log: Logger, deliver: @escaping @Sendable (CapturedPhoto) -> Void,
                progress: @escaping @Sendable (DownloadProgress) -> Void,
                preview: @escaping @Sendable (EarlyPreview) -> Void) {
        self.init(log: log, deliver: deliver, progress: progress)
        self.showPreview = preview
    }

    /// Hands over a photo the camera took by itself. It goes to the sinks in order with
    /// the triggered shots.
    public func deliver(_ photo: CapturedPhoto) {
        deliverPhoto(photo)
    }

    /// Tells how far the download of a file of the capture in flight has come, for the
    /// status line ("downloading 45 % of 24 MB"). Call it from any thread, as often as
    /// the bytes arrive: it never blocks, and reports outside a capture are ignored.
    /// (Added in ABI 5.)
    public func report(_ progress: DownloadProgress) {
        reportProgress(progress)
    }
}

extension BackendContext {
    /// Shows a picture of the capture in flight before its file is whole: the camera's
    /// thumbnail, or the one at the front of the file as it downloads. Displays paint it
    /// until the photo itself is stored. Call it from any thread: it never blocks, and one
    /// given outside a capture is ignored. (Added in contract 9.4.)
    public func show(_ preview: EarlyPreview) {
        showPreview(preview)
    }
}

/// A small picture of a file of the capture in flight, for displays, sent before the
/// file is whole. The bytes are the camera's: a display decodes them within its own
/// limits, as any image from outside. (Added in contract 9.4.)
public struct EarlyPreview: Sendable, Equatable {
    /// The file's name on the camera.
    public var file: String
    /// The camera's name in the pipeline, when a backend drives several.
    public var camera: String?
    /// A JPEG.
    public var jpeg: Data
    /// Where it came from, in words for the display ("camera thumbnail").
    public var source: String

    /// The largest picture a display takes; a larger one is dropped.
    public static let largest = 512 << 10

    public init(file: String, camera: String? = nil, jpeg: Data, source: String) {
        self.file = file
        self.camera = camera
        self.jpeg = jpeg
        self.source = source
    }
}

/// How far the download of one file of a capture has come.
public struct DownloadProgress: Sendable, Equatable {
    /// The file's name on the camera.
    public var file: String
    /// The camera's name in the pipeline, when a backend drives several.
    public var camera: String?
    /// Bytes received so far.
    public var bytes: Int64
    /// The file's size, when the camera announced it.
    public var total: Int64?

    /// Creates a report.
    public init(file: String, camera: String? = nil, bytes: Int64, total: Int64?) {
        self.file = file
        self.camera = camera
        self.bytes = bytes
        self.total = total
    }
}
