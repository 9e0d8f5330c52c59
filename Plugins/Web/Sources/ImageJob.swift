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
}
