import Foundation

/// When to try the camera again after it went away: after 200 ms, then with doubling
/// waits up to the limit.
final class Reconnection: @unchecked Sendable {  // confined to the camera thread
    private var limit: Duration = .seconds(5)
    private var delay: Duration = .milliseconds(200)
    private var next = ContinuousClock.now
    private var outageStarted: ContinuousClock.Instant?
    private(set) var pollInterval: Duration = .milliseconds(250)

    func configure(pollMilliseconds: Int, limitMilliseconds: Int) {
        pollInterval = .milliseconds(max(10, pollMilliseconds))
        limit = .milliseconds(max(200, limitMilliseconds))
    }

    func lost() {
        if outageStarted == nil { outageStarted = .now }
        delay = .milliseconds(200)
        next = .now + delay
    }

    func isDue() -> Bool { outageStarted != nil && ContinuousClock.now >= next }

    func failedAttempt() {
        delay = min(delay * 2, limit)
        next = .now + delay
    }

    /// The camera is open; returns how long it was away, if it was.
    @discardableResult
    func connected() -> Duration? {
        defer { outageStarted = nil }
        return outageStarted.map { ContinuousClock.now - $0 }
    }
}
