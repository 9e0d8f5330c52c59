#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Dispatch
import Synchronization

/// SIGINT and SIGTERM: the first asks for a clean stop, the second exits at once.
final class SignalHandler {
    private let sources: [any DispatchSourceSignal]

    init(onFirst: @escaping @Sendable (Int32) -> Void) {
        let count = Mutex(0)
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { @Sendable in
                let seen = count.withLock { value -> Int in value += 1; return value }
                if seen == 1 { onFirst(number) } else { _exit(130) }
            }
            source.resume()
            return source
        }
    }

    func cancel() {
        sources.forEach { $0.cancel() }
    }
}
