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
    let submit: @Sendable (TriggerEvent) -> Void

    /// Creates a channel that hands every event to `submit`. The coordinator makes the
    /// channels it gives triggers; tests of a trigger can make their own.
    public init(_ submit: @escaping @Sendable (TriggerEvent) -> Void) {
        self.submit = submit
    }

    /// Delivers one event to the coordinator.
    public func send(_ event: TriggerEvent) {
        submit(event)
    }

    /// Delivers one event to the coordinator.
    public func send(_ event: ShutterEvent, origin: String? = nil, token: UInt64 = 0) {
        submit(TriggerEvent(event, origin: origin, token: token))
    }
}
