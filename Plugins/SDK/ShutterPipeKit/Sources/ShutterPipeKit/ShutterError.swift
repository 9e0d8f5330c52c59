/// Why something failed, as a typed value the coordinator and trigger devices can act on.
public enum FailureCause: String, Sendable, CaseIterable, Codable {
    /// The operating system or a device refused access (for example a camera claimed by
    /// another program).
    case permissionDenied
    /// The destination cannot take the photo: full disk, read-only or missing folder.
    case storageUnavailable
    /// The camera was there but could not take or deliver the photo.
    case cameraFailure
    /// No camera could be found or opened.
    case noCamera
    /// An operation did not finish before its deadline.
    case timeout
    /// The configuration is invalid.
    case invalidConfiguration
    /// The coordinator's queue is full; the event was refused.
    case busy
    /// A capture arrived outside photo mode while automatic entering is off.
    case notInPhotoMode
    /// A failure that fits no other cause (a plugin threw an untyped error).
    case unexpected

    /// The state that answers an event failing with this cause.
    ///
    /// The rule of the remote-shutter SDKs: a capture that fails answers
    /// ``ShutterState/photoFailed``, whatever the cause; entering that fails answers
    /// ``ShutterState/exitedOrUnableToEnter``.
    public func state(answering event: ShutterEvent) -> ShutterState {
        event == .capture ? .photoFailed : .exitedOrUnableToEnter
    }
}

/// A failure with a typed cause and a message for people.
///
/// Plugins throw this to tell the coordinator what went wrong. The message names the
/// thing that failed; ``fix`` says what the user can do about it.
public struct ShutterError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is.
    public var cause: FailureCause
    /// What failed, for people: "no space left on /mnt/card".
    public var message: String
    /// What the user can do about it, if anything is known.
    public var fix: String?

    /// Creates a failure.
    public init(_ cause: FailureCause, _ message: String, fix: String? = nil) {
        self.cause = cause
        self.message = message
        self.fix = fix
    }

    /// `message`, followed by the fix where there is one.
    public var description: String {
        guard let fix, !fix.isEmpty else { return message }
        return "\(message) (\(fix))"
    }

    /// Wraps any error as a ``ShutterError``: a ``ShutterError`` stays as it is, a
    /// ``ConfigError`` becomes ``FailureCause/invalidConfiguration``, anything else is
    /// ``FailureCause/unexpected`` with the fallback cause given.
    public static func wrapping(_ error: any Error, as cause: FailureCause = .unexpected) -> ShutterError {
        switch error {
        case let error as ShutterError: return error
        case let error as ConfigError: return ShutterError(.invalidConfiguration, error.description)
        case is CancellationError: return ShutterError(.timeout, "cancelled")
        default: return ShutterError(cause, String(describing: error))
        }
    }
}
