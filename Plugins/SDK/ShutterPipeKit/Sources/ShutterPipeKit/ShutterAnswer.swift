import Foundation

/// An event as a trigger delivers it, with what the trigger needs to route the answer.
public struct TriggerEvent: Sendable, Equatable {
    /// The shutter event.
    public var event: ShutterEvent
    /// The trigger's own name for what arrived ("Play", "KEY_VOLUMEUP", "line 3"), for
    /// logs.
    public var origin: String?
    /// An opaque value the trigger chooses to match the answer to the request (a client
    /// connection, say). The coordinator hands it back unchanged in ``ShutterAnswer``.
    public var token: UInt64
    /// For a capture: the wall-clock moment at which to fire, no earlier (a rig's `at`).
    /// The coordinator hands it to ``CaptureBackend/capture(at:)`` as soon as the capture's
    /// turn comes, so that the backend, not the trigger, waits for it: the wait ends on
    /// the thread that fires. `nil`: at once. (Added in ABI 4.)
    public var fireAt: Date?
    /// The handle its answer arrives on, when it was sent with ``EventChannel/submit(_:)``.
    /// (Added in contract 9.1.)
    public internal(set) var pendingAnswer: PendingAnswer?

    /// Creates an event.
    public init(_ event: ShutterEvent, origin: String? = nil, token: UInt64 = 0, fireAt: Date? = nil) {
        self.event = event
        self.origin = origin
        self.token = token
        self.fireAt = fireAt
    }

    /// Gives the event a handle its answer arrives on (one it has already is kept), and
    /// returns it: for events a host makes itself, such as a sequence's frames. (Added in
    /// contract 9.4.)
    public mutating func answerHandle() -> PendingAnswer {
        if let pendingAnswer { return pendingAnswer }
        let handle = PendingAnswer(request: self)
        pendingAnswer = handle
        return handle
    }

    /// Equal when they say the same; the handle an answer arrives on is not compared.
    public static func == (a: TriggerEvent, b: TriggerEvent) -> Bool {
        a.event == b.event && a.origin == b.origin && a.token == b.token && a.fireAt == b.fireAt
    }
}

/// One file a sink stored.
public struct StoredFile: Sendable, Equatable, Codable {
    /// Where the file is, as the sink reports it (a path for file sinks).
    public var location: String
    /// The sequence number the sink gave the photo, if it numbers photos.
    public var sequence: Int?
    /// The size in bytes, as stored (after tagging, say).
    public var byteCount: Int
    /// The camera file this is a copy of (its ``CapturedFile/name``); `nil` for what a
    /// sink made itself, such as a sidecar or a manifest.
    public var cameraFile: String?
    /// The camera of the file this is a copy of (its ``CapturedFile/camera``: its name in
    /// the config, when a backend drives several), so that each camera's frame of a shot
    /// is told apart; `nil` for a backend's only camera. (Added in contract 9.2.)
    public var camera: String?
    /// The EXIF summary of the bytes the sink wrote, when it read them (a files sink does,
    /// for a JPEG, from memory): the catalogue records it without reading the file back.
    /// `nil`: the catalogue reads the file. (Added in contract 10.3.)
    public var exif: ExifSummary?

    /// Creates a record of a stored file.
    public init(location: String, sequence: Int? = nil, byteCount: Int, cameraFile: String? = nil) {
        self.location = location
        self.sequence = sequence
        self.byteCount = byteCount
        self.cameraFile = cameraFile
    }

    /// Creates a record of a stored copy of `file`, of the camera that made it.
    /// (Added in contract 9.2.)
    public init(location: String, sequence: Int? = nil, byteCount: Int, copyOf file: CapturedFile) {
        self.location = location
        self.sequence = sequence
        self.byteCount = byteCount
        self.cameraFile = file.name
        self.camera = file.camera
    }
}

/// What a sink reports after storing a photo durably.
public struct SinkReceipt: Sendable, Equatable {
    /// The files of the photo written, in order: copies of the camera's files, and what
    /// belongs to this photo alone (its sidecar, a derivative). They are what
    /// ``ShutterState/photoSuccess`` lists.
    public var files: [StoredFile]
    /// The sink's own files this photo was written into, which belong to no photo (a
    /// manifest, a log, a database): kept apart, so that an answer does not list them as
    /// the photo's. (Added in contract 9.2.)
    public var records: [StoredFile] = []
    /// Things worth telling the user that did not stop the photo being stored, such as
    /// "camera JPEG is truncated; stored as received".
    public var warnings: [String]

    /// Creates a receipt.
    public init(files: [StoredFile], warnings: [String] = []) {
        self.files = files
        self.warnings = warnings
    }

    /// Creates a receipt that also names the sink's own files this photo was written
    /// into (``records``). (Added in contract 9.2.)
    public init(files: [StoredFile], records: [StoredFile], warnings: [String] = []) {
        self.files = files
        self.records = records
        self.warnings = warnings
    }

    /// The names of the files of `photo` that this receipt does not list as stored (by
    /// ``StoredFile/cameraFile``, with at least one byte). Empty for an archival sink
    /// that did its job.
    public func filesMissing(from photo: CapturedPhoto) -> [String] {
        let kept = Set(files.filter { $0.byteCount > 0 }.compactMap(\.cameraFile))
        return photo.files.map(\.name).filter { !kept.contains($0) }
    }
}

/// The state that answers one event, as the coordinator syncs it back to a trigger.
public struct ShutterAnswer: Sendable, Equatable {
    /// The event this answers, exactly as the trigger delivered it.
    public var request: TriggerEvent
    /// The answering state.
    public var state: ShutterState
    /// Why it failed: set for ``ShutterState/photoFailed``, and for
    /// ``ShutterState/exitedOrUnableToEnter`` when entering failed. `nil` for a normal
    /// exit.
    public var failure: ShutterError?
    /// The files stored for a ``ShutterState/photoSuccess``, across every sink: the
    /// photo's files, never a sink's own records.
    public var stored: [StoredFile]
    /// The sinks' own files this shot was written into (``SinkReceipt/records``: a
    /// manifest, a log), apart from the photo's. (Added in contract 9.2.)
    public var records: [StoredFile] = []
    /// The shot's identity, for captures that reached the camera and for shots taken with
    /// the camera's own button. (Added in ABI 6.)
    public var shot: ShotID?
    /// Warnings from sinks, for a success that deserves a note.
    public var warnings: [String]
    /// How long the coordinator took to answer, from dequeuing the event.
    public var duration: Duration
    /// For a capture that reached the camera: how long the backend took to deliver it.
    public var captureDuration: Duration?
    /// For a capture that reached the sinks: how long they took to store it.
    public var storeDuration: Duration?
    /// For a capture the camera took: when, as the backend reports it
    /// (``CapturedPhoto/captureTime``). A rig compares it across nodes. (Added in ABI 4.)
    public var captureTime: Date?
    /// For a shot: the session label it was taken under (``ShotContext/label``), or `nil`.
    /// (Added in ABI 8.)
    public var label: String?

    /// Creates an answer.
    public init(
        request: TriggerEvent, state: ShutterState, failure: ShutterError? = nil,
        stored: [StoredFile] = [], shot: ShotID? = nil, warnings: [String] = [],
        duration: Duration = .zero
    ) {
        self.request = request
        self.state = state
        self.failure = failure
        self.stored = stored
        self.shot = shot
        self.warnings = warnings
        self.duration = duration
    }

    /// The shot's number in its run, from 1 (``shot``'s number).
    public var shotNumber: Int? { shot?.number }

    /// A one-line summary: the state's name, then the stored locations or the cause and
    /// message. This is the shape the `stdin` trigger prints.
    public var summary: String {
        var parts = [state.rawValue]
        if let failure {
            parts.append("\(failure.cause.rawValue): \(failure.description)")
        } else if !stored.isEmpty {
            parts.append(stored.map(\.location).joined(separator: " "))
        }
        if !warnings.isEmpty {
            parts.append("(warning: \(warnings.joined(separator: "; ")))")
        }
        return parts.joined(separator: " ")
    }
}
