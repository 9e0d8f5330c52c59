import Foundation
import ShutterPipeFixtures
import Synchronization

/// The live-view stream's frames, each made one ahead on a thread of its own, as a camera
/// streams them: a GetStream is answered with a frame already made. Made on request, a
/// frame took a debug build long enough on a loaded machine to pass libgphoto2's 2.5 s
/// PTP/IP read limit. Frame N is a synthesised 640×480 JPEG with a white marker that moves
/// a step each frame and "live view frame N" in its comment.
final class LiveViewFrames: Sendable {
    private let state = Mutex<(served: Int, ready: (number: Int, data: Data)?)>((0, nil))

    /// Starts making frame 1.
    init() {
        prepare(1)
    }

    /// The next frame, and the one after it started.
    func next() -> Data {
        let (number, ready) = state.withLock { state -> (Int, Data?) in
            state.served += 1
            defer { state.ready = nil }
            return (state.served, state.ready?.number == state.served ? state.ready?.data : nil)
        }
        let frame = ready ?? Self.make(number)
        prepare(number + 1)
        return frame
    }

    /// How many frames were served.
    var served: Int { state.withLock { $0.served } }

    private func prepare(_ number: Int) {
        let thread = Thread { [self] in
            let data = Self.make(number)
            state.withLock { state in
                if state.served < number { state.ready = (number, data) }  // not overtaken by a request meanwhile
            }
        }
        thread.name = "live view frame \(number)"
        thread.start()
    }

    private static func make(_ number: Int) -> Data {
        SyntheticJPEG.make(width: 640, height: 480, shot: 1, marker: number, comment: "shutterpipe-fakecam live view frame \(number)")
    }
}
