import CGPhoto2
import Foundation
import GPhoto2Backend
import ShutterPipeSupport

/// Bulb: the shutter held open for a time the worker measures.
///
/// libgphoto2 holds a shutter open through a toggle setting: a body's own bulb control
/// (`bulb`: Canon EOS BulbStart/BulbEnd, Nikon, Sony, Olympus, Fuji, Panasonic) or, on a
/// camera of no vendor it knows, PTP's open capture (InitiateOpenCapture, and
/// TerminateOpenCapture to end it), which it offers as `movie`. Set to 1 it opens, to 0
/// it closes; the exposure's files then come as a capture's do.
extension GPhotoCamera {
    /// The toggles that may hold a shutter open, in the order they are tried.
    static let bulbControls = ["bulb", "movie"]
    /// What a camera without a working bulb control is told to do.
    static let bulbFix = "bulb works on bodies libgphoto2 offers 'bulb' for (Canon EOS, Nikon, Sony, Olympus, Fuji, Panasonic) and on cameras with PTP open capture; otherwise take a long exposure with shutterspeed"
    /// The operations of a bulb's failures, which the session words for people.
    static let openingBulb = "opening a bulb exposure", closingBulb = "closing the bulb exposure"

    /// This camera's toggles that may hold its shutter open (empty: none).
    ///
    /// A toggle offered is not yet one that works: libgphoto2 2.5.30 offers Fuji's `bulb`
    /// to every camera that has InitiateCapture, and a body of another make refuses its
    /// first step (a Fuji property), before any shutter opens. ``holdOpen(with:for:)``
    /// then tries the next.
    func bulbControls() throws(GPhotoFailure) -> [String] {
        var found: [String] = []
        for name in Self.bulbControls {
            guard let setting = try setting(named: name), setting.kind == .toggle, !setting.readOnly else { continue }
            found.append(name)
        }
        return found
    }

    /// Opens the shutter with the first of `controls` the camera takes, holds it open for
    /// `exposure` from the moment the camera answered the open (so that it is never short),
    /// and closes it. The close is tried again for two seconds when it fails; then this
    /// throws, saying the shutter may still be open. Returns the control that held it and
    /// how long, from the open's answer to the close's request.
    func holdOpen(with controls: [String], for exposure: Duration) throws(GPhotoFailure) -> (control: String, held: Duration) {
        var refusals: [String] = []
        for control in controls {
            do throws(GPhotoFailure) {
                try set(control, to: .integer(1))
            } catch {
                if error.lostConnection { throw error }
                refusals.append("'\(control)': \(error)")
                continue
            }
            let opened = ContinuousClock.now
            Self.sleep(until: opened + exposure)
            let held = ContinuousClock.now - opened
            var closing: GPhotoFailure?
            let giveUp = ContinuousClock.now + .seconds(2)
            repeat {
                do throws(GPhotoFailure) {
                    try set(control, to: .integer(0))
                    return (control, held)
                } catch {
                    closing = error
                    if error.lostConnection { break }
                    Thread.sleep(forTimeInterval: 0.1)
                }
            } while ContinuousClock.now < giveUp
            throw GPhotoFailure(code: closing?.code ?? GP_ERROR, operation: Self.closingBulb,
                                detail: "the shutter may still be open after \(formatDuration(held)): \(closing.map { "\($0)" } ?? "no answer")")
        }
        throw GPhotoFailure(code: GP_ERROR_NOT_SUPPORTED, operation: Self.openingBulb,
                            detail: "the camera refused each bulb control libgphoto2 offers for it, before any shutter opened: \(refusals.joined(separator: "; "))")
    }

    /// Sleeps on the monotonic clock until `moment`, to the tick (`clock_nanosleep` with an
    /// absolute time: a signal or a late wake-up never adds to the exposure).
    static func sleep(until moment: ContinuousClock.Instant) {
        let left = moment - ContinuousClock.now
        guard left > .zero else { return }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let (seconds, attoseconds) = left.components
        let nanoseconds = Int(now.tv_nsec) + Int(attoseconds / 1_000_000_000)
        var target = timespec(tv_sec: now.tv_sec + Int(seconds) + nanoseconds / 1_000_000_000, tv_nsec: nanoseconds % 1_000_000_000)
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil) == EINTR {}
    }
}
