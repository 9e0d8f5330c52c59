/// How the coordinator behaves; the `coordinator:` block of the config.
public struct CoordinatorSettings: Sendable, Equatable {
    /// Whether a capture outside photo mode enters photo mode first. Default on.
    public var autoEnter: Bool = true
    /// Whether photo mode is entered as the session starts, before any event: for
    /// backends whose shots arrive by themselves (a hot folder, a camera shot with its own
    /// button) in a session nobody taps. Default off.
    public var enterAtStart: Bool = false
    /// How many events may wait behind the one being handled. Beyond it, a capture is
    /// answered `photoFailed` and an enter `exitedOrUnableToEnter`, both with cause `busy`.
    public var queueLimit: Int = 16
    /// The deadline for entering photo mode (opening the camera).
    public var enterTimeout: Duration = .seconds(30)
    /// The deadline for one capture, download included. Long exposures need more.
    public var captureTimeout: Duration = .seconds(60)
    /// The deadline for one sink to store one photo.
    public var storeTimeout: Duration = .seconds(60)
    /// The deadline for the backend to finish with a stored photo (deleting it from the
    /// card, say).
    public var finishTimeout: Duration = .seconds(30)
    /// The deadline for leaving photo mode.
    public var exitTimeout: Duration = .seconds(15)
    /// The deadline for a trigger to take an answer.
    public var syncTimeout: Duration = .seconds(5)
    /// The deadline for reading or changing camera settings (rule 15).
    public var settingsTimeout: Duration = .seconds(15)
    /// The sequences the config plans, by name (`sequences:`).
    public var sequences: [String: SequencePlan] = [:]
    /// The products shot in turn (`shotList:`), when the config has a shot list.
    public var shotList: ShotList?

    /// The defaults.
    public init() {}
}
