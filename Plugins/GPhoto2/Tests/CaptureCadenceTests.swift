@testable import GPhoto2Camera
import Testing

/// How long the camera waits after a capture before its housekeeping (card deletes):
/// longer than the shoot's own pace, so that a delete never holds the next shot.
@Suite("camera worker: the pause before card deletes follows the shoot's pace")
struct CaptureCadenceTests {
    @Test("one capture: a second; a steady pace of 1.2 s: twice that, so no delete starts between its shots; a burst: a second; a pause does not count as the pace; at most 10 s, for an interval of minutes")
    func grace() {
        let start = ContinuousClock.now
        var cadence = CaptureCadence()
        #expect(cadence.grace == .seconds(1))
        cadence.began(at: start)
        #expect(cadence.grace == .seconds(1), "one capture says no pace")
        for shot in 1...5 { cadence.began(at: start + .milliseconds(1200 * shot)) }
        #expect(cadence.grace == .milliseconds(2400))
        // A pause of a minute (a change of outfit) is not the pace; the shots after it are.
        cadence.began(at: start + .seconds(66))
        #expect(cadence.grace == .milliseconds(2400))
        // A burst: 0.2 s apart, the grace falls to its least.
        var burst = CaptureCadence()
        for shot in 0...6 { burst.began(at: start + .milliseconds(200 * shot)) }
        #expect(burst.grace == .seconds(1))
        // An interval of 20 s: at most 10 s, so the deletes run between its frames.
        var interval = CaptureCadence()
        for frame in 0...3 { interval.began(at: start + .seconds(20 * frame)) }
        #expect(interval.grace == .seconds(10))
        // The median, not the mean: one slow shot among quick ones does not stretch it.
        var mixed = CaptureCadence()
        for at in [0, 1000, 2000, 9000, 10000, 11000] { mixed.began(at: start + .milliseconds(at)) }
        #expect(mixed.grace == .seconds(2))
    }
}
