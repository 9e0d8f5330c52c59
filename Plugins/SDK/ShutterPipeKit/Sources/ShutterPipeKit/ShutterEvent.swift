/// An event a trigger device sends to the shutter coordinator.
///
/// These are the four events of the remote-shutter flow that earbud SDKs use: a device
/// asks to enter photo mode, to take a photo, or to leave photo mode. Anything a trigger
/// cannot map to one of those arrives as ``unknown``.
///
/// It may grow (contract 10 on): a new event is a minor revision, so switch over it with
/// `@unknown default` and answer what you do not know as ``unknown``.
public enum ShutterEvent: String, Sendable, CaseIterable, Codable {
    /// Enter photo mode: prepare the capture backend.
    case enter
    /// Take one photo.
    case capture
    /// Leave photo mode: finish what is in flight and stop the backend.
    case exit
    /// A command the trigger received but could not map. Logged and answered with the
    /// current mode; it changes nothing.
    case unknown

    /// Parses an event name (`enter`, `capture`, `exit`); anything else is ``unknown``.
    public init(parsing name: String) {
        self = ShutterEvent(rawValue: name.lowercased()) ?? .unknown
    }
}

/// The state the coordinator syncs back to a trigger device in answer to an event.
///
/// It may grow (contract 10 on): switch over it with `@unknown default`.
public enum ShutterState: String, Sendable, CaseIterable, Codable {
    /// Photo mode was entered (or was already on).
    case enteredPhotoMode
    /// Photo mode could not be entered, or has been left.
    case exitedOrUnableToEnter
    /// The photo is durably stored by every sink.
    case photoSuccess
    /// The photo was not taken or not stored by every sink.
    case photoFailed
}
