import CShutterPipeSupport

/// What the calling thread has used so far: its CPU time, and how often it gave up the
/// processor by itself (a sleep, a wait for I/O or a lock). Two readings around a piece
/// of work tell whether the work blocked, or only computed (and, on a loaded machine, was
/// preempted: time that is not the work's).
public struct ThreadUsage: Sendable, Equatable {
    /// CPU time, user and system.
    public var cpu: Duration
    /// Voluntary context switches.
    public var voluntarySwitches: Int64

    /// The calling thread's usage now (zero where the system cannot tell).
    public static func current() -> ThreadUsage {
        var nanoseconds: Int64 = 0, switches: Int64 = 0
        guard shutterpipe_thread_usage(&nanoseconds, &switches) == 0 else { return ThreadUsage(cpu: .zero, voluntarySwitches: 0) }
        return ThreadUsage(cpu: .nanoseconds(nanoseconds), voluntarySwitches: switches)
    }
}
