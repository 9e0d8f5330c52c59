/// Asks the coordinator to run a sequence the config plans (`sequences:` in the pipeline
/// config): one tap, a series of frames: a bracket, a focus stack, an interval. It takes
/// its turn among the events; each frame is answered on its own, as a capture is (the
/// trigger's ``TriggerSource/sync(_:)``), and the whole sequence once, through the
/// function given with it (``SequenceAnswer``). An `exit` from any trigger, or the
/// session's stop, cancels it between two frames; the camera is left as it was found.
/// (Added in contract 9.4.)
public struct SequenceRequest: Sendable, Equatable {
    /// The sequence's name in the config.
    public var name: String
    /// Where it came from, for the log ("stdin", "socket client 3").
    public var origin: String?
    /// Hears each frame's answer, besides the trigger's ``TriggerSource/sync(_:)``: for a
    /// trigger that answers its clients through handles (the socket's), not `sync`.
    public var eachFrame: (@Sendable (ShutterAnswer) -> Void)?

    public init(_ name: String, origin: String? = nil, eachFrame: (@Sendable (ShutterAnswer) -> Void)? = nil) {
        self.name = name
        self.origin = origin
        self.eachFrame = eachFrame
    }

    /// Equal when they ask for the same; the frames' listener is not compared.
    public static func == (a: SequenceRequest, b: SequenceRequest) -> Bool {
        a.name == b.name && a.origin == b.origin
    }
}

/// How a sequence ended. Every frame was answered on its own before it. (Added in
/// contract 9.4.)
public struct SequenceAnswer: Sendable, Equatable {
    public var request: SequenceRequest
    /// Its kind in words ("focus stack", "bracket", "interval"); empty when refused.
    public var kind: String
    /// Frames planned, taken (photoSuccess), failed, and not taken because the sequence
    /// was cancelled or skipped (an interval's frame that could not fire in time).
    public var planned: Int
    public var taken: Int
    public var failed: Int
    public var cancelled: Int
    public var skipped: Int
    /// Why it was refused at once (an unknown name, no camera settings) or stopped (a
    /// setting the camera refused); nil when it ran to its end or was cancelled.
    public var failure: ShutterError?
    /// What cancelled it ("exit from stdin", "the session stopping"), when something did.
    public var cancelledBy: String?

    public init(request: SequenceRequest, kind: String = "", planned: Int = 0, taken: Int = 0, failed: Int = 0, cancelled: Int = 0,
                skipped: Int = 0, failure: ShutterError? = nil, cancelledBy: String? = nil) {
        self.request = request
        self.kind = kind
        self.planned = planned
        self.taken = taken
        self.failed = failed
        self.cancelled = cancelled
        self.skipped = skipped
        self.failure = failure
        self.cancelledBy = cancelledBy
    }

    /// One line, as the `stdin` trigger prints it: `sequenceDone stack: 9 of 9 taken`,
    /// `sequenceCancelled stack: 4 of 9 taken, 5 cancelled (exit from stdin)`,
    /// `sequenceRefused invalidConfiguration: …`.
    public var summary: String {
        if failure != nil && planned == 0 { return "sequenceRefused \(failure!.cause.rawValue): \(failure!.description)" }
        var parts = ["\(taken) of \(planned) taken"]
        if failed > 0 { parts.append("\(failed) failed") }
        if skipped > 0 { parts.append("\(skipped) skipped") }
        if cancelled > 0 { parts.append("\(cancelled) cancelled") }
        let state = failure != nil ? "sequenceFailed" : cancelledBy != nil ? "sequenceCancelled" : "sequenceDone"
        let why = failure.map { " (\($0.description))" } ?? cancelledBy.map { " (\($0))" } ?? ""
        return "\(state) \(request.name): \(parts.joined(separator: ", "))\(why)"
    }
}

/// A frame's place in a sequence, for the sinks (``ShotContext/sequence``): names
/// (`{frame}`, `{sequence}`), XMP and the catalogue. (Added in contract 9.4.)
public struct SequenceFrame: Sendable, Equatable {
    /// The sequence's name in the config, and its kind in words.
    public var name: String
    public var kind: String
    /// This frame's place, from 1, and how many are planned.
    public var index: Int
    public var count: Int
    /// The setting stepped and its value for this frame (`focusdistance` `1800`,
    /// `shutterspeed` `1/250`), when the kind steps one.
    public var setting: String?
    public var value: String?
    /// The exposure offset of a bracket's frame, in EV.
    public var ev: Double?

    public init(name: String, kind: String, index: Int, count: Int, setting: String? = nil, value: String? = nil, ev: Double? = nil) {
        self.name = name
        self.kind = kind
        self.index = index
        self.count = count
        self.setting = setting
        self.value = value
        self.ev = ev
    }
}
