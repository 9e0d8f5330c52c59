import ShutterPipeKit
import Synchronization
import TestSupport

/// A backend whose `finish` waits until the test releases it. Its calls are noted on
/// `timeline`, with whatever else a test notes there (a sink's stores).
final class GatedFinishBackend: CaptureBackend {
    private let state = Mutex<(captures: Int, released: Bool, waiting: [CheckedContinuation<Void, Never>])>((0, false, []))
    private let timeline: Timeline

    init(timeline: Timeline = Timeline()) {
        self.timeline = timeline
    }

    /// The backend's own calls, in order.
    var events: [String] { timeline.all.filter { !$0.hasPrefix("store") } }
    var cameraName: String { "gated" }

    func prepare(_ context: BackendContext) async throws {}

    func capture() async throws -> CapturedPhoto {
        let number = state.withLock { state -> Int in
            state.captures += 1
            return state.captures
        }
        timeline.note("capture \(number)")
        return ScriptedBackend.photo(number)
    }

    func finish(_ photo: CapturedPhoto, stored: Bool) async {
        let number = photo.files.first?.name.filter(\.isNumber) ?? "?"
        timeline.note("finish \(number) began")
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let go = state.withLock { state -> Bool in
                if !state.released { state.waiting.append(continuation) }
                return state.released
            }
            if go { continuation.resume() }
        }
        timeline.note("finish \(number) ended")
    }

    func stop() async { timeline.note("stop") }

    func releaseFinish() {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.released = true
            defer { state.waiting = [] }
            return state.waiting
        }
        waiting.forEach { $0.resume() }
    }
}
