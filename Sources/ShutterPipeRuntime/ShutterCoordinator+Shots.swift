import ShutterPipeKit
import ShutterPipeSupport

/// The two ways a shot begins, and the one way it is stored and answered.
extension ShutterCoordinator {
    /// The next shot's identity: the one place shots are counted.
    func nextShot() -> ShotID {
        shotsTaken += 1
        return ShotID(run: runName, number: shotsTaken)
    }

    /// Takes a photo and leaves it to a store task, which answers; a failure before that
    /// is answered here, in order. With `bulb`, the shutter is held open that long (a
    /// bulb sequence's frame: the backend is a ``BulbCapture``, checked before).
    func capture(_ request: TriggerEvent, from trigger: NamedTrigger, started: ContinuousClock.Instant, bulb: Duration? = nil) async {
        if !status.inPhotoMode {
            guard settings.autoEnter else {
                let failure = ShutterError(.notInPhotoMode, "not in photo mode", fix: "send enter first, or set coordinator.autoEnter: true")
                await answerInOrder(ShutterAnswer(request: request, state: .photoFailed, failure: failure), to: trigger, started: started)
                return
            }
            if let failure = await enterPhotoMode() {
                await answerInOrder(ShutterAnswer(request: request, state: .photoFailed, failure: failure), to: trigger, started: started)
                return
            }
        }
        let id = nextShot()
        let backend = self.backend
        let captureStarted = ContinuousClock.now
        var photo: CapturedPhoto
        shotsInFlight.capturing(id.number)
        do {
            // A capture for a later moment (a rig's `at`) has the wait on top of its deadline.
            let fireAt = request.fireAt
            let wait = fireAt.map { Duration.milliseconds(Int64(max(0, $0.timeIntervalSinceNow) * 1000)) } ?? .zero
            if let bulb, let holder = backend as? any BulbCapture {
                // The exposure is the camera's time, on top of the capture's deadline.
                photo = try await withDeadline(settings.captureTimeout + bulb, "bulb capture") { try await holder.captureBulb(for: bulb) }
            } else {
                photo = try await withDeadline(settings.captureTimeout + wait, "capture") { try await backend.capture(at: fireAt) }
            }
        } catch {
            var failed = ShutterAnswer(request: request, state: .photoFailed,
                                       failure: ShutterError.wrapping(error, as: .cameraFailure), shot: id)
            failed.captureDuration = ContinuousClock.now - captureStarted
            shotsInFlight.ended(id.number)
            await answerInOrder(failed, to: trigger, started: started)
            return
        }
        photo.id = id
        var answer = ShutterAnswer(request: request, state: .photoSuccess, shot: id)
        answer.captureDuration = ContinuousClock.now - captureStarted
        await store(photo, answering: answer, to: trigger, started: started)
    }

    /// Stores a photo taken with the camera's own button (rule 9): it gets its id now and
    /// takes the path of every other shot, answered to no trigger.
    /// A companion backend's shot (`owner`) takes the same path, and is finished by it.
    func storeCameraShot(_ photo: CapturedPhoto, from owner: (any CaptureBackend)? = nil) async {
        var photo = photo
        let id = nextShot()
        photo.id = id
        await store(photo, answering: ShutterAnswer(request: TriggerEvent(.capture, origin: photo.origin ?? (owner == nil ? "camera button" : photo.camera)),
                                                    state: .photoSuccess, shot: id),
                    to: nil, started: .now, finishedBy: owner)
    }

    /// Hands the photo to the sinks in a store task, which answers with the outcome
    /// (`answer` completed), then lets the backend finish it. The next capture may run
    /// meanwhile (rule 2).
    private func store(_ photo: CapturedPhoto, answering answer: ShutterAnswer, to trigger: NamedTrigger?,
                       started: ContinuousClock.Instant, finishedBy owner: (any CaptureBackend)? = nil) async {
        guard let id = photo.id else { return }
        shotsInFlight.storing(id.number)
        // Displays start on the bytes while the sinks write them (a sharp preview before
        // the file lands); each returns at once.
        for sessionObserver in sessionObservers { await sessionObserver.captured(photo, shot: id.number) }
        await settlePendingStore()
        var context = ShotContext(session: session, shot: id, captureTime: photo.captureTime, camera: photo.camera,
                                  trigger: trigger?.name ?? "camera", label: label)
        if trigger != nil { context.sequence = sequenceFrame }
        pending.begin(Task {
            let storeStarted = ContinuousClock.now
            let outcome = await self.chain.store(photo, context: context)
            let failure = photo.missing ?? outcome.failure
            var stored = answer
            stored.state = failure == nil ? .photoSuccess : .photoFailed
            stored.failure = failure
            stored.stored = outcome.files
            stored.records = outcome.records
            stored.warnings = outcome.warnings
            stored.captureTime = photo.captureTime
            stored.label = context.label
            stored.storeDuration = ContinuousClock.now - storeStarted
            stored.duration = ContinuousClock.now - started
            self.shotsInFlight.ended(id.number)
            await self.deliver(stored, to: trigger)
            await self.chain.finish(photo, archived: outcome.archived, by: owner)
        })
    }
}
