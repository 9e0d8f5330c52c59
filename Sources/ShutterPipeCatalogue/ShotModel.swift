import Foundation
import ShutterPipeKit

/// A shot to record: one answered capture, or a shot found on disk.
public struct ShotRecord: Sendable, Equatable {
    /// The shot's identity, when it came from a session.
    public var shotID: ShotID?
    /// The shot's number in its run (the coordinator's), when it came from a session.
    public var runNumber: Int?
    /// The trigger that asked for it, or "camera" for the camera's own button.
    public var trigger: String?
    /// The camera's name in the config (or the backend's name for it).
    public var camera: String?
    /// The port it is on ("ptpip:127.0.0.1:15740", "usb:001,004"), when known.
    public var cameraPort: String?
    /// When the request came, when the camera fired, when every sink had stored it.
    public var asked: Date?
    public var fired: Date?
    public var stored: Date?
    public var state: ShotState
    public var failureCause: String?
    public var failureMessage: String?
    public var files: [CatalogueFile]
    public var exif: ExifSummary
    /// Rating 0–5, label and pick: from a sidecar on import, else none.
    public var rating: Int
    public var label: String?
    public var pick: Pick
    /// Keywords: from a sidecar on import.
    public var keywords: [String] = []
    /// The session label it was taken under (``ShutterAnswer/label``).
    public var sessionLabel: String?
    /// Its place in a sequence, when one took it.
    public var sequence: CatalogueSequencePlace?

    public init(shotID: ShotID? = nil, runNumber: Int? = nil, trigger: String? = nil, camera: String? = nil, cameraPort: String? = nil, asked: Date? = nil,
                fired: Date? = nil, stored: Date? = nil, state: ShotState, failureCause: String? = nil, failureMessage: String? = nil,
                files: [CatalogueFile] = [], exif: ExifSummary = ExifSummary(), rating: Int = 0, label: String? = nil, pick: Pick = .none) {
        self.shotID = shotID
        self.runNumber = runNumber ?? shotID?.number
        self.trigger = trigger
        self.camera = camera
        self.cameraPort = cameraPort
        self.asked = asked
        self.fired = fired
        self.stored = stored
        self.state = state
        self.failureCause = failureCause
        self.failureMessage = failureMessage
        self.files = files
        self.exif = exif
        self.rating = rating
        self.label = label
        self.pick = pick
    }
}
