import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// Entering and leaving photo mode: the backend and its companions prepared and stopped
/// under their deadlines (rules 4, 6, 7 and 10).
extension ShutterCoordinator {
    var currentModeState: ShutterState {
        status.inPhotoMode ? .enteredPhotoMode : .exitedOrUnableToEnter
    }

    /// Prepares the backend unless photo mode is on; returns the failure, if any.
    func enterPhotoMode() async -> ShutterError? {
        guard !status.inPhotoMode else { return nil }
        await settlePendingStore()  // prepare never overlaps another call
        let backend = self.backend
        let context = BackendContext(log: log.named("backend"), deliver: { [ingress] photo in
            ingress?.submitCameraShot(photo)
        }, progress: { [shotsInFlight] progress in
            shotsInFlight.report(progress)
        }, preview: { [shotsInFlight, sessionObservers] preview in
            // Displays hear it with its shot's number, after the answer too (a preview decoded
            // as the bytes came may follow it by a few milliseconds).
            guard let shot = shotsInFlight.show(preview), !sessionObservers.isEmpty else { return }
            Task { for sessionObserver in sessionObservers { await sessionObserver.previewed(preview, shot: shot) } }
        })
        do {
            try await withDeadline(settings.enterTimeout, "entering photo mode") {
                try await backend.prepare(context)
            }
            status.inPhotoMode = true
            enterGaveUp = false
            await prepareCompanions()
            return nil
        } catch {
            let failure = ShutterError.wrapping(error, as: .cameraFailure)
            // The backend may still be preparing (a slow camera opening): an exit or the
            // end of the session stops it even so, so that nothing is left held.
            if failure.cause == .timeout { enterGaveUp = true }
            return failure
        }
    }

    /// Waits until the photo being stored has been answered.
    func settlePendingStore() async {
        await pending.take()?.value
    }

    /// Prepares the companion backends: one that cannot start is logged, and the session
    /// goes on with the capturing backend and the others.
    func prepareCompanions() async {
        preparedCompanions = []
        for (index, companion) in companions.enumerated() {
            let context = BackendContext(log: log.named("backend \(index + 2)"), deliver: { [ingress] photo in
                ingress?.submitCameraShot(photo, from: index + 1)
            })
            do {
                try await withDeadline(settings.enterTimeout, "entering photo mode") { try await companion.prepare(context) }
                preparedCompanions.append(index)
            } catch {
                log.error("backend \(index + 2) (\(await companion.cameraName)) could not start: \(ShutterError.wrapping(error)); the session goes on without it")
            }
        }
    }

    func stopBackend() async {
        let backend = self.backend
        do {
            try await withDeadline(settings.exitTimeout, "leaving photo mode") { await backend.stop() }
        } catch {
            log.warning("backend did not stop cleanly: \(ShutterError.wrapping(error))")
        }
        for index in preparedCompanions {
            let companion = companions[index]
            do { try await withDeadline(settings.exitTimeout, "leaving photo mode") { await companion.stop() } } catch {
                log.warning("backend \(index + 2) did not stop cleanly: \(ShutterError.wrapping(error))")
            }
        }
        preparedCompanions = []
        status.inPhotoMode = false
        enterGaveUp = false
    }
}
