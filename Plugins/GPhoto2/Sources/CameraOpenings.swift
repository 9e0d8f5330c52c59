import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// The opening of each camera, kept across enters. A camera slower to open than
/// `coordinator.enterTimeout` fails that enter, but its open goes on: the next enter waits
/// for the same open instead of abandoning it and starting another, which would never
/// finish either. Only past `openTimeout` is the open given up (and its worker restarted).
final class CameraOpenings: Sendable {
    /// How an open ended, and when.
    struct Outcome: Sendable {
        var result: Result<CameraIdentity, ShutterError>
        var finishedAt: ContinuousClock.Instant
    }

    private struct Opening {
        var token: UInt64
        var task: Task<Outcome, Never>
    }

    private let openings = Mutex<(next: UInt64, byCamera: [String: Opening])>((1, [:]))

    /// Opens the camera of `worker`, or waits for the open already under way (or done,
    /// and not yet taken). A caller cancelled meanwhile (its enter gave up) leaves the
    /// outcome for the next caller.
    func open(_ worker: CameraWorker, with request: WorkerRequest, timeout: Duration) async -> Result<CameraIdentity, ShutterError> {
        let asked = ContinuousClock.now
        while true {
            let (opening, adopted) = openings.withLock { state -> (Opening, Bool) in
                if let running = state.byCamera[worker.name] { return (running, true) }
                let opening = Opening(token: state.next, task: Task { await Self.run(worker, request, timeout: timeout) })
                state.next += 1
                state.byCamera[worker.name] = opening
                return (opening, false)
            }
            let outcome = await opening.task.value
            if Task.isCancelled { return .failure(ShutterError(.timeout, "opening '\(worker.name)' was given up")) }
            take(opening, of: worker.name)
            // A failure from before this enter says nothing about the camera now: try again.
            if adopted, case .failure = outcome.result, outcome.finishedAt < asked { continue }
            return outcome.result
        }
    }

    /// Forgets every open (the cameras are being closed): the next enter opens afresh.
    func forget() {
        openings.withLock { $0.byCamera.removeAll() }
    }

    private func take(_ opening: Opening, of camera: String) {
        openings.withLock { state in
            if state.byCamera[camera]?.token == opening.token { state.byCamera[camera] = nil }
        }
    }

    private static func run(_ worker: CameraWorker, _ request: WorkerRequest, timeout: Duration) async -> Outcome {
        let result: Result<CameraIdentity, ShutterError>
        do {
            let (reply, descriptors, _) = try await withDeadline(timeout, "opening '\(worker.name)'") {
                try await worker.reply(to: worker.send(request))
            }
            descriptors.forEach { _ = close($0) }
            switch reply {
            case .opened(let identity): result = .success(identity)
            case .failed(let failure): result = .failure(failure.error)
            default: result = .failure(ShutterError(.cameraFailure, "unexpected answer to opening: \(reply)"))
            }
        } catch {
            result = .failure(ShutterError.wrapping(error, as: .cameraFailure))
        }
        return Outcome(result: result, finishedAt: .now)
    }
}
