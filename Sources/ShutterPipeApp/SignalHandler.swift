#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import ShutterPipeRuntime
import ShutterPipeSupport
import ShutterPipeKit
import Synchronization

/// SIGINT, SIGTERM and SIGHUP: the first asks for a clean stop, the second exits at once
/// (removing what plugins registered with ``ExitCleanup``). SIGHUP is a stop because a
/// session outlives no terminal: a closed SSH session or terminal window sends it, and a
/// default SIGHUP would end the session with no answer for the shot in flight.
///
/// The signals are taken from the moment it is made (``SignalForwarder``): a stop sent right
/// after the start is not lost.
final class SignalHandler {
    private let listener: SignalForwarder.Listener

    init(onFirst: @escaping @Sendable (Int32) -> Void) throws(SystemError) {
        let count = Mutex(0)
        listener = try SignalForwarder.listen([SIGINT, SIGTERM, SIGHUP]) { number in
            let seen = count.withLock { value -> Int in value += 1; return value }
            if seen == 1 { onFirst(number) } else {
                ExitCleanup.removeAll()
                _exit(130)
            }
        }
    }

    func cancel() {
        listener.cancel()
    }
}
