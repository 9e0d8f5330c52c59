import Foundation
import ShutterPipeKit
import Synchronization

/// One image being made, and the requests waiting for it: the first asker makes it, the
/// others wait on its connection threads (never the pool) for the one result.
final class ImageJob<Value: Sendable>: Sendable {
    private let outcome = Mutex<Result<Value, ShutterError>?>(nil)
    private let done = DispatchGroup()

    init() { done.enter() }

    func finish(_ result: Result<Value, ShutterError>) {
        outcome.withLock { $0 = result }
        done.leave()
    }

    var result: Result<Value, ShutterError> {
        done.wait()
        return outcome.withLock { $0 }!
    }
}
