/// A source of shutter events: an earbud, a remote, a socket, standard input.
///
/// ## Contract
/// - ``run(delivering:)`` delivers events until the input ends, then returns. It must
///   return promptly when its task is cancelled (the pipeline is shutting down). A
///   trigger that blocks on a file descriptor does so on a thread of its own, never on
///   the cooperative pool.
/// - Setup failures (a socket path that cannot be bound, a device that does not exist and
///   is not waited for) are thrown from ``run(delivering:)`` as ``ShutterError``.
/// - For every event delivered, the coordinator calls ``sync(_:)`` exactly once with the
///   answering state, in the order the coordinator finished them. `sync` should return
///   quickly: it is how the device learns the state (print a line, set a property, write
///   a reply), not a place for long work.
/// - When the pipeline runs several triggers, it runs until every trigger has returned
///   or the process is asked to stop.
public protocol TriggerSource: Sendable {
    /// Delivers events through `events` until the input ends or the task is cancelled.
    func run(delivering events: EventChannel) async throws

    /// Receives the state that answers one event this trigger delivered.
    func sync(_ answer: ShutterAnswer) async
}

extension TriggerSource {
    /// Nothing: a trigger that takes its answers from the handles ``EventChannel/submit(_:)``
    /// returns needs no `sync`. (The default was added in contract 9.1.)
    public func sync(_ answer: ShutterAnswer) async {}
}

/// The way into the coordinator for one trigger.
///
/// Sending never blocks and never waits for the answer: the answer arrives later through
/// ``TriggerSource/sync(_:)``. The channel is `Sendable`; a trigger may send from any
/// thread.
public struct EventChannel: Sendable {
    /// Where a settings request goes, with the function that takes its answer.
    public typealias SettingsSubmit = @Sendable (SettingsRequest, @escaping @Sendable (SettingsAnswer) -> Void) -> Void

    /// Where a label goes, with the function that takes its answer. (Added in ABI 8.)
    public typealias LabelSubmit = @Sendable (LabelRequest, @escaping @Sendable (LabelAnswer) -> Void) -> Void

    /// Where a sequence request goes, with the function that takes its answer. (Added in
    /// contract 9.4.)
    public typealias SequenceSubmit = @Sendable (SequenceRequest, @escaping @Sendable (SequenceAnswer) -> Void) -> Void

    let submit: @Sendable (TriggerEvent) -> Void
    let submitSettings: SettingsSubmit
    let submitLabel: LabelSubmit
    var submitSequence: SequenceSubmit = { request, answer in
        answer(SequenceAnswer(request: request, failure: ShutterError(.invalidConfiguration, "this session runs no sequences")))
    }

    /// Creates a channel that hands every event to `submit` and every settings request to
    /// `settings` (by default, each is answered at once: this channel takes none). The
    /// coordinator makes the channels it gives triggers; tests of a trigger can make their
    /// own.
    public init(_ submit: @escaping @Sendable (TriggerEvent) -> Void, settings: SettingsSubmit? = nil, label: LabelSubmit? = nil) {
        self.submit = submit
        self.submitLabel = label ?? { request, answer in
            answer(LabelAnswer(request: request, failure: ShutterError(.invalidConfiguration, "this session takes no labels")))
        }
        self.submitSettings = settings ?? { request, answer in
            answer(SettingsAnswer(request: request, failure: ShutterError(.invalidConfiguration, "this session takes no settings requests")))
        }
    }

    /// Creates a channel that also takes sequence requests. (Added in contract 9.4.)
    public init(_ submit: @escaping @Sendable (TriggerEvent) -> Void, settings: SettingsSubmit?, label: LabelSubmit?, sequence: @escaping SequenceSubmit) {
        self.init(submit, settings: settings, label: label)
        self.submitSequence = sequence
    }

    /// Asks the coordinator to run the sequence the config names: it takes its turn among
    /// the events, each frame is answered through ``TriggerSource/sync(_:)`` as a capture
    /// is, and `answer` is called once at its end, on some thread. Never blocks; a full
    /// queue refuses it at once with cause `busy`. (Added in contract 9.4.)
    public func send(_ request: SequenceRequest, answer: @escaping @Sendable (SequenceAnswer) -> Void = { _ in }) {
        submitSequence(request, answer)
    }

    /// Delivers one event to the coordinator.
    public func send(_ event: TriggerEvent) {
        submit(event)
    }

    /// Delivers one event to the coordinator and returns the handle its answer arrives on:
    /// await it or observe it, instead of matching tokens in ``TriggerSource/sync(_:)``.
    /// Never blocks. (Added in contract 9.1.)
    public func submit(_ event: TriggerEvent) -> PendingAnswer {
        var event = event
        let handle = PendingAnswer(request: event)
        event.pendingAnswer = handle
        submit(event)
        return handle
    }

    /// Delivers one event to the coordinator.
    public func send(_ event: ShutterEvent, origin: String? = nil, token: UInt64 = 0) {
        submit(TriggerEvent(event, origin: origin, token: token))
    }

    /// Asks the coordinator to read or change camera settings. It takes its turn among the
    /// events this and the other triggers send (never during a capture), and `answer` is
    /// called once, on some thread, with the applied values or the refusal. Like an event,
    /// it never blocks; a full queue refuses it at once with cause `busy`. (Added in ABI 5.)
    public func send(_ request: SettingsRequest, answer: @escaping @Sendable (SettingsAnswer) -> Void) {
        submitSettings(request, answer)
    }

    /// Sets the session label (a scanned barcode, an order number), or clears it with an
    /// empty one: the shots after it in the queue carry it (``ShotContext/label``). It
    /// takes its turn among the events, so a label scanned before a tap names that tap's
    /// shot; `answer` is called once, on some thread. Never blocks; a full queue refuses
    /// it at once with cause `busy`. (Added in ABI 8.)
    public func send(_ request: LabelRequest, answer: @escaping @Sendable (LabelAnswer) -> Void = { _ in }) {
        submitLabel(request, answer)
    }
}

/// A session label a trigger sets: what the next shots carry. (Added in ABI 8.)
public struct LabelRequest: Sendable, Equatable {
    /// The label; empty clears it.
    public var label: String
    /// Where it came from, for the log ("barcode scanner", a client's name).
    public var origin: String?

    public init(_ label: String, origin: String? = nil) {
        self.label = label
        self.origin = origin
    }

    /// The longest label taken, in bytes of UTF-8 (limits are in bytes: a few visible
    /// characters can hold thousands of combining marks): a barcode, an order number, a
    /// name. The session also refuses control and formatting characters, a leading
    /// combining mark, and `~`, `.` or `..` as the whole label.
    public static let maximumLength = 200
}

/// The answer to a ``LabelRequest``. (Added in ABI 8.)
public struct LabelAnswer: Sendable, Equatable {
    public var request: LabelRequest
    /// The session's label now (`nil`: none), when it was taken.
    public var label: String?
    /// Why it was refused (a label too long or with line breaks, a full queue).
    public var failure: ShutterError?

    public init(request: LabelRequest, label: String? = nil, failure: ShutterError? = nil) {
        self.request = request
        self.label = label
        self.failure = failure
    }

    /// One line: `label TEXT`, `label` (none), or `labelRefused CAUSE: MESSAGE`. The shape
    /// the `stdin` trigger prints.
    public var summary: String {
        if let failure { return "labelRefused \(failure.cause.rawValue): \(failure.description)" }
        return label.map { "label \($0)" } ?? "label"
    }
}
