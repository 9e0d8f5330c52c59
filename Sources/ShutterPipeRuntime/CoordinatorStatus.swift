import Foundation
import ShutterPipeKit

/// What the coordinator has done so far, for status displays.
///
/// Every count is derived in one place, ``record(_:refused:)``, from the answers the
/// coordinator delivered (and the outcomes of shots the camera took by itself), so no
/// code path can count a shot twice or forget one.
public struct CoordinatorStatus: Sendable, Equatable {
    /// Whether photo mode is on.
    public var inPhotoMode = false
    /// Photos stored by every sink.
    public var photosStored = 0
    /// Captures that failed, refusals included.
    public var photosFailed = 0
    /// Events answered, refusals included.
    public var eventsAnswered = 0
    /// Events refused because the queue was full.
    public var eventsRefused = 0
    /// Answers that report a failure: captures that failed (refusals included), enters that
    /// could not enter, and shots from the camera's own button that could not be stored.
    public var eventsFailed = 0
    /// How long the last successful shot took, from dequeuing to stored.
    public var lastShotDuration: Duration?
    /// When the last photo was stored.
    public var lastShotTime: Date?
    /// Trigger setup failures, as messages.
    public var triggerFailures: [String] = []
    /// Sinks that could not start (``PhotoSink/begin()``), as messages: the session ended
    /// before its triggers started.
    public var startFailures: [String] = []

    /// All zero.
    public init() {}

    /// Counts one delivered answer. `refused`: the queue was full. `fromCamera`: the
    /// outcome of a shot taken with the camera's own button, which answers no event.
    mutating func record(_ answer: ShutterAnswer, refused: Bool = false, fromCamera: Bool = false) {
        if !fromCamera { eventsAnswered += 1 }
        if refused { eventsRefused += 1 }
        if answer.state != .photoSuccess && answer.failure != nil { eventsFailed += 1 }
        switch answer.state {
        case .photoSuccess:
            photosStored += 1
            lastShotDuration = answer.duration
            lastShotTime = Date()
        case .photoFailed:
            photosFailed += 1
        case .enteredPhotoMode, .exitedOrUnableToEnter:
            break
        @unknown default:
            break
        }
    }
}
