import Foundation
import ShutterPipeKit
import Synchronization

/// One image being made, and the requests waiting for it: the first asker makes it, the
/// others wait on its connection threads (never the pool) for the one result.
final class ImageJob<Value: Sendable>: Sendable {
    private let outcome = Mutex<Result<Value, ShutterError>?>(nil)
    private let done = DispatchGroup()

    init() { done.enter() }

    /// Ends the job with `result`, once: a later finish (a decode that ends after the
    /// job was given a preview from elsewhere) changes nothing. Returns whether it ended it.
    @discardableResult
    func finish(_ result: Result<Value, ShutterError>) -> Bool {
        let first = outcome.withLock { outcome -> Bool in
            guard outcome == nil else { return false }
            outcome = result
            return true
        }
        if first { done.leave() }
        return first
    }

    var result: Result<Value, ShutterError> {
        done.wait()
        return outcome.withLock { $0 }!
    }

    /// The result once the job ends, waiting at most `limit` (on the caller's own thread);
    /// nil if it has not ended by then.
    func result(within limit: Duration) -> Result<Value, ShutterError>? {
        let nanoseconds = limit.components.seconds * 1_000_000_000 + limit.components.attoseconds / 1_000_000_000
        guard done.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .success else { return nil }
        return outcome.withLock { $0 }
    }
}
