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

/// The way into the coordinator for one trigger.
///
/// Sending never blocks and never waits for the answer: the answer arrives later through
/// ``TriggerSource/sync(_:)``. The channel is `Sendable`; a trigger may send from any
/// thread.
public struct EventChannel: Sendable {
    /// Where a settings request goes, with the function that takes its answer.
    public typealias SettingsSubmit = @Sendable (SettingsRequest, @escaping @Sendable (SettingsAnswer) -> Void) -> Void

    let submit: @Sendable (TriggerEvent) -> Void
    let submitSettings: SettingsSubmit

    /// Creates a channel that hands every event to `submit` and every settings request to
    /// `settings` (by default, each is answered at once: this channel takes none). The
    /// coordinator makes the channels it gives triggers; tests of a trigger can make their
    /// own.
    public init(_ submit: @escaping @Sendable (TriggerEvent) -> Void, settings: SettingsSubmit? = nil) {
        self.submit = submit
        self.submitSettings = settings ?? { request, answer in
            answer(SettingsAnswer(request: request, failure: ShutterError(.invalidConfiguration, "this session takes no settings requests")))
        }
    }

    /// Delivers one event to the coordinator.
    public func send(_ event: TriggerEvent) {
        submit(event)
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
}
