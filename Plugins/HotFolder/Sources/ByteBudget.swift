import Foundation

/// The bytes read from a hot folder and not yet stored by every sink, kept under a limit:
/// a file that would pass it waits, on the watcher's thread, until earlier ones are
/// stored. One file always goes, however large (the size limit bounds it). So a folder
/// filled faster than the sinks store costs at most the limit in memory, and the kernel
/// queues the folder's events meanwhile.
final class ByteBudget: @unchecked Sendable {  // every field under `condition`
    let limit: Int64
    private let condition = NSCondition()
    private var used: Int64 = 0
    private var closed = false

    init(limit: Int64) {
        self.limit = limit
    }

    /// Takes `bytes` from the budget, waiting while they do not fit; false, taking
    /// nothing, when the budget is closed first.
    func reserve(_ bytes: Int64) -> Bool {
        condition.withLock {
            while !closed && used > 0 && used + bytes > limit { condition.wait() }
            guard !closed else { return false }
            used += bytes
            return true
        }
    }

    /// Gives `bytes` back.
    func release(_ bytes: Int64) {
        condition.withLock {
            used = max(0, used - bytes)
            condition.broadcast()
        }
    }

    /// Whether `bytes` more would wait.
    func wouldWait(_ bytes: Int64) -> Bool {
        condition.withLock { used > 0 && used + bytes > limit }
    }

    /// Ends every wait, now and later (the session is leaving photo mode).
    func close() {
        condition.withLock {
            closed = true
            condition.broadcast()
        }
    }
}
