#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Dispatch
import ShutterPipeKit
import Synchronization

/// SIGINT, SIGTERM and SIGHUP: the first asks for a clean stop, the second exits at once
/// (removing what plugins registered with ``ExitCleanup``). SIGHUP is a stop because a
/// session outlives no terminal: a closed SSH session or terminal window sends it, and a
/// default SIGHUP would end the session with no answer for the shot in flight.
final class SignalHandler {
    private let sources: [any DispatchSourceSignal]

    init(onFirst: @escaping @Sendable (Int32) -> Void) {
        let count = Mutex(0)
        sources = [SIGINT, SIGTERM, SIGHUP].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { @Sendable in
                let seen = count.withLock { value -> Int in value += 1; return value }
                if seen == 1 { onFirst(number) } else {
                    ExitCleanup.removeAll()
                    _exit(130)
                }
            }
            source.resume()
            return source
        }
    }

    func cancel() {
        sources.forEach { $0.cancel() }
    }
}
