import ShutterPipeKit
import Synchronization
import TestSupport

/// Waits until `condition` holds or `limit` passes; returns whether it held.
func waitFor(_ limit: Duration, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while !condition() && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
    return condition()
}

/// A backend whose first `finish` waits until the test releases it.
final class GatedFinishBackend: CaptureBackend {
    private let state = Mutex<(events: [String], captures: Int, released: Bool, waiting: [CheckedContinuation<Void, Never>])>(([], 0, false, []))

    var events: [String] { state.withLock { $0.events } }
    var cameraName: String { "gated" }

    func prepare(_ context: BackendContext) async throws {}

    func capture() async throws -> CapturedPhoto {
        let number = state.withLock { state -> Int in
            state.captures += 1
            state.events.append("capture \(state.captures)")
            return state.captures
        }
        return ScriptedBackend.photo(number)
    }

    func finish(_ photo: CapturedPhoto, stored: Bool) async {
        let number = photo.files.first?.name.filter(\.isNumber) ?? "?"
        state.withLock { $0.events.append("finish \(number) began") }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let go = state.withLock { state -> Bool in
                if !state.released { state.waiting.append(continuation) }
                return state.released
            }
            if go { continuation.resume() }
        }
        state.withLock { $0.events.append("finish \(number) ended") }
    }

    func stop() async { state.withLock { $0.events.append("stop") } }

    func releaseFinish() {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.released = true
            defer { state.waiting = [] }
            return state.waiting
        }
        waiting.forEach { $0.resume() }
    }
}
