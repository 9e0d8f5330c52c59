import Foundation

/// How long after a capture the camera counts as idle, for housekeeping (card deletes,
/// status reads): longer than the photographer's own pace.
///
/// A card delete that has begun holds the next capture until it ends (a round trip and a
/// card write: hundreds of milliseconds on some bodies). With a fixed second of grace,
/// shots taken every 1.1-1.3 s met the delete of the one before and waited for it. So the grace
/// is twice the usual time between the last captures (their median; a gap over
/// ``pause`` is a pause, not the pace), at least ``least`` and at most ``most``: a steady
/// pace gets no delete between its shots, and a delete waits for a pause.
struct CaptureCadence {
    static let least: Duration = .seconds(1)
    static let most: Duration = .seconds(10)
    /// A gap this long is a pause in the shoot, not its pace.
    static let pause: Duration = .seconds(30)
    /// How many of the last gaps make the pace.
    static let kept = 5

    private var lastStart: ContinuousClock.Instant?
    private var gaps: [Duration] = []

    /// A capture began `at`.
    mutating func began(at instant: ContinuousClock.Instant) {
        if let lastStart, instant - lastStart < Self.pause {
            gaps.append(instant - lastStart)
            if gaps.count > Self.kept { gaps.removeFirst(gaps.count - Self.kept) }
        }
        lastStart = instant
    }

    /// How long after the last capture ended the camera counts as idle.
    var grace: Duration {
        guard !gaps.isEmpty else { return Self.least }
        let median = gaps.sorted()[gaps.count / 2]
        return min(Self.most, max(Self.least, median * 2))
    }
}
