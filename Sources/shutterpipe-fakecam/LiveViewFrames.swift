import Foundation
import ShutterPipeFixtures
import ShutterPipeSupport
import Synchronization

/// The live-view stream's frames, each made one ahead on a thread of its own, as a camera
/// streams them: a GetStream is answered with a frame already made. Made on request, a
/// frame took a debug build long enough on a loaded machine to pass libgphoto2's 2.5 s
/// PTP/IP read limit. Frame N is a synthesised JPEG (`--live-size`, 640×480 by default)
/// with a white marker that moves a step each frame and "live view frame N at T" in its
/// comment: T, the moment it leaves the camera in milliseconds since 1970 (13 digits,
/// written as it is served), is what the page's glass-to-page latency counts from.
final class LiveViewFrames: Sendable {
    private let state = Mutex<(served: Int, ready: (number: Int, data: Data)?)>((0, nil))
    private let make: @Sendable (_ number: Int, _ comment: String) -> Data

    /// The placeholder of the time in a frame's comment.
    static let timePlaceholder = "0000000000000"

    /// Starts making frame 1; `make` draws frame N with the comment given.
    init(make: @escaping @Sendable (_ number: Int, _ comment: String) -> Data) {
        self.make = make
        prepare(1)
    }

    /// The next frame, and the one after it started.
    func next() -> Data {
        let (number, ready) = state.withLock { state -> (Int, Data?) in
            state.served += 1
            defer { state.ready = nil }
            return (state.served, state.ready?.number == state.served ? state.ready?.data : nil)
        }
        var frame = ready ?? make(number, Self.comment(number))
        prepare(number + 1)
        Self.stamp(&frame)
        return frame
    }

    private static func comment(_ number: Int) -> String {
        "shutterpipe-fakecam live view frame \(number) at \(timePlaceholder)"
    }

    /// Writes now into the frame's time placeholder.
    private static func stamp(_ frame: inout Data) {
        guard let range = frame.prefix(512).range(of: Data(" at \(timePlaceholder)".utf8)) else { return }
        let now = String(format: "%013lld", Int64(Date().timeIntervalSince1970 * 1000))
        frame.replaceSubrange(range.lowerBound + 4..<range.upperBound, with: Data(now.utf8))
    }

    /// How many frames were served.
    var served: Int { state.withLock { $0.served } }

    private func prepare(_ number: Int) {
        OwnedThread.start("live view frame \(number)") { [self] in
            let data = make(number, Self.comment(number))
            state.withLock { state in
                if state.served < number { state.ready = (number, data) }  // not overtaken by a request meanwhile
            }
        }
    }

}
