import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// Sequences: rule 17. A sequence takes its turn among the events and runs to its end as
/// one turn: each frame is a capture answered to the trigger that asked, its setting
/// changed before it through the camera's settings (one at a time, never during a
/// capture: rule 15); an `exit` from any trigger, or the session's stop, cancels it
/// between frames; the settings it changed are put back as they were found, and the whole
/// is answered once.
extension ShutterCoordinator {
    func run(_ request: SequenceRequest, from triggerIndex: Int, answer reply: @Sendable (SequenceAnswer) -> Void) async {
        let trigger = triggers[triggerIndex]
        let by = trigger.name + (request.origin.map { " (\($0))" } ?? "")
        func refuse(_ failure: ShutterError) {
            log.warning("sequence '\(LogText.escaped(request.name))' from \(by) refused: \(failure)")
            reply(SequenceAnswer(request: request, failure: failure))
        }
        guard let plan = settings.sequences[request.name] else {
            let known = settings.sequences.keys.sorted()
            return refuse(ShutterError(.invalidConfiguration, "no sequence '\(LogText.escaped(request.name))' in the config",
                                       fix: known.isEmpty ? "plan one under 'sequences:' (docs/config.md)" : "the sequences are: \(known.joined(separator: ", "))"))
        }
        if !status.inPhotoMode {
            guard settings.autoEnter else {
                return refuse(ShutterError(.notInPhotoMode, "not in photo mode", fix: "send enter first, or set coordinator.autoEnter: true"))
            }
            if let failure = await enterPhotoMode() { return refuse(failure) }
        }
        // The camera's settings as found: what the frames step from, and what is put back.
        // A combined plan (`each:`) steps its own setting and its inner plan's.
        let inner = plan.each.flatMap { settings.sequences[$0] }
        let control = backendAbilities.contains(.cameraSettings) ? backend as? any CameraSettingsControl : nil
        func found(_ stepped: SequencePlan) async throws(ShutterError) -> CameraSetting? {
            guard let key = stepped.setting ?? stepped.defaultSetting else { return nil }
            guard let settingsControl = control else {
                throw ShutterError(.invalidConfiguration, "\(stepped.kind.withArticle) steps '\(key)', but the backend '\(await backend.cameraName)' has no camera settings",
                                   fix: "sequences that step a setting need a camera backend, such as gphoto2")
            }
            let current: CameraSetting?
            do {
                current = try await withDeadline(settings.settingsTimeout, "reading \(key)") {
                    try await settingsControl.settings([key], camera: stepped.camera)
                }.first { $0.key == key || $0.label == key }
            } catch {
                throw ShutterError.wrapping(error, as: .cameraFailure)
            }
            guard let current else {
                throw ShutterError(.invalidConfiguration, "the camera has no setting '\(key)' for sequence '\(stepped.name)'",
                                   fix: "see `shutterpipe camera settings` for its settings, and name one with 'setting:'")
            }
            return current
        }
        let key = plan.setting ?? plan.defaultSetting
        let steps: [SequenceStep], restore: [SettingChange]
        var innerPlan: (plan: SequencePlan, steps: [SequenceStep])?, innerRestore: [SettingChange] = []
        do throws(ShutterError) {
            (steps, restore) = try plan.steps(try await found(plan))
            if let inner {
                let planned = try inner.steps(try await found(inner))
                (innerPlan, innerRestore) = ((inner, planned.steps), planned.restore)
            }
        } catch {
            return refuse(error)
        }
        let shots = plan.shots(steps, inner: innerPlan)
        let innerCamera = inner?.camera ?? plan.camera
        if shots.contains(where: { $0.bulb != nil }), !(backendAbilities.contains(.bulbCapture) && backend is any BulbCapture) {
            return refuse(ShutterError(.invalidConfiguration, "sequence '\(plan.name)' holds the shutter open (bulb), but the backend '\(await backend.cameraName)' cannot",
                                       fix: "bulb needs a camera backend with a bulb control, such as gphoto2; or take a timed exposure with a bracket or an interval"))
        }

        let stepping = [key, innerPlan.flatMap { $0.plan.setting ?? $0.plan.defaultSetting }].compactMap { $0 }
        log.info("sequence '\(plan.name)' from \(by): \(plan.kind.withArticle) of \(steps.count) frame(s)"
                 + (innerPlan.map { " with \($0.plan.kind.withArticle) of \($0.steps.count) ('\($0.plan.name)') at each, \(shots.count) in all" } ?? "")
                 + (stepping.isEmpty ? "" : ", stepping \(stepping.joined(separator: " and "))"),
                 [("event", "sequenceStarted"), ("sequence", plan.name)])
        ingress?.sequenceStarted()
        // The frames' own answers, counted as they are handed over (a shot from the camera's
        // button meanwhile is not one of them).
        let tally = Mutex((taken: 0, failed: 0))
        var answer = SequenceAnswer(request: request, kind: plan.kind.words, planned: shots.count)
        let began = ContinuousClock.now
        var changed = false, innerChanged = false
        var skipping: Int?  // an interval's frame whose moment passed: its captures are skipped
        func change(_ changes: [SettingChange], camera: String?) async -> ShutterError? {
            guard let control, !changes.isEmpty else { return nil }
            await settlePendingStore()  // rule 15: never while a photo is being stored
            return await SettingsCall.run(SettingsRequest(.change(changes), camera: camera, origin: "sequence \(plan.name)"), on: control, timeout: settings.settingsTimeout).failure
        }
        for (position, shot) in shots.enumerated() {
            if let why = cancellation() {
                answer.cancelled = shots.count - position
                answer.cancelledBy = why
                break
            }
            if skipping == shot.outer {
                answer.skipped += 1
                continue
            }
            if plan.kind == .interval && shot.opens {
                // Frame k at start + k·every on the monotonic clock: never drifting. One whose
                // moment passed by a whole period is skipped, and said.
                let due = began + plan.every * shot.outer
                if ContinuousClock.now - due >= plan.every {
                    answer.skipped += 1
                    skipping = shot.outer
                    log.warning("sequence '\(plan.name)': frame \(shot.outer + 1) skipped: \(formatDuration(ContinuousClock.now - due)) late (the last frame took longer than 'every')")
                    continue
                }
                if await !pause(until: due) {
                    // Cancelled while waiting for its moment: this frame is one of the cancelled.
                    answer.cancelled = shots.count - position
                    answer.cancelledBy = cancellation() ?? "cancelled"
                    break
                }
            }
            var failure = await change(shot.changes, camera: plan.camera)
            if failure == nil && !shot.changes.isEmpty { changed = true }
            if failure == nil { failure = await change(shot.innerChanges, camera: innerCamera) }
            if failure == nil && !shot.innerChanges.isEmpty { innerChanged = true }
            if let failure {
                answer.failure = failure
                answer.cancelled = shots.count - position
                log.error("sequence '\(plan.name)': frame \(position + 1) not taken: \(failure)")
                break
            }
            // After a lens move, the focus stack's settle (the longer of two stacks').
            let settle = shot.settles ? max(plan.kind == .focusStack ? plan.settle : .zero,
                                            innerPlan.map { $0.plan.kind == .focusStack ? $0.plan.settle : .zero } ?? .zero) : .zero
            if settle > .zero, await !pause(until: .now + settle) {
                // Cancelled while the lens settles: this frame is not taken unsettled.
                answer.cancelled = shots.count - position
                answer.cancelledBy = cancellation() ?? "cancelled"
                break
            }
            sequenceFrame = shot.frame
            var event = TriggerEvent(.capture, origin: "sequence \(plan.name) frame \(position + 1)/\(shots.count)")
            let eachFrame = request.eachFrame
            event.answerHandle().observe { frame in
                tally.withLock { frame.state == .photoSuccess ? ($0.taken += 1) : ($0.failed += 1) }
                eachFrame?(frame)
            }
            await capture(event, from: trigger, started: .now, bulb: shot.bulb)
            sequenceFrame = nil
            guard shot.closes, shot.outer + 1 < steps.count else { continue }
            // Between two of the plan's frames: the inner plan's setting back where it
            // started (its next run steps from there), then a spin's step and its settle.
            if innerChanged, let failure = await change(innerRestore, camera: innerCamera) {
                answer.failure = failure
                answer.cancelled = shots.count - position - 1
                log.error("sequence '\(plan.name)': \(failure)")
                break
            }
            if plan.kind == .spin {
                // The step between frames (a turntable's turn), then its settle.
                if let failure = await spinStep(plan, next: steps[shot.outer + 1].frame) {
                    answer.failure = failure
                    answer.cancelled = shots.count - position - 1
                    log.error("sequence '\(plan.name)': \(failure)")
                    break
                }
                if plan.settle > .zero { _ = await pause(until: .now + plan.settle) }
            }
        }
        await settlePendingStore()
        for (didChange, changes, camera) in [(innerChanged, innerRestore, innerCamera), (changed, restore, plan.camera)] where didChange && !changes.isEmpty {
            guard let control else { break }
            let call = await SettingsCall.run(SettingsRequest(.change(changes), camera: camera, origin: "sequence \(plan.name)"), on: control, timeout: settings.settingsTimeout)
            if let failure = call.failure {
                log.error("sequence '\(plan.name)': the camera is not as it was found: \(changes.map { "\($0.key)=\($0.value)" }.joined(separator: " ")) failed: \(failure)")
            } else {
                log.info("sequence '\(plan.name)': \(changes.map { "\($0.key) back to \($0.value)" }.joined(separator: ", "))")
            }
        }
        ingress?.sequenceEnded()
        (answer.taken, answer.failed) = tally.withLock { ($0.taken, $0.failed) }
        log.info("\(answer.summary) in \(formatDuration(ContinuousClock.now - began))", [("event", "sequenceEnded"), ("sequence", plan.name)])
        reply(answer)
    }

    /// Runs a spin's step before the frame `next`, with its place in the environment;
    /// the failure when it does not exit 0 within its timeout.
    private func spinStep(_ plan: SequencePlan, next: SequenceFrame) async -> ShutterError? {
        var environment = ProcessInfo.processInfo.environment
        environment["SHUTTERPIPE_SEQUENCE"] = plan.name
        environment["SHUTTERPIPE_FRAME"] = String(next.index)
        environment["SHUTTERPIPE_FRAMES"] = String(next.count)
        environment["SHUTTERPIPE_ANGLE"] = next.value ?? "0"
        let what = "the step before frame \(next.index) (\(plan.command.joined(separator: " ").prefix(80)))"
        do {
            let run = try await ChildProcess.run(plan.command, environment: environment, captureErrors: true, timeout: plan.stepTimeout, processGroup: true)
            if run.timedOut {
                return ShutterError(.timeout, "\(what) ran past \(formatDuration(plan.stepTimeout)) and was killed", fix: "check the turntable, or raise the sequence's 'timeout'")
            }
            guard run.status.succeeded else {
                let said = String(decoding: run.errorOutput.suffix(300), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                return ShutterError(.unexpected, "\(what) failed: \(run.status)\(said.isEmpty ? "" : ": \(LogText.escaped(said))")")
            }
            return nil
        } catch {
            return ShutterError(.invalidConfiguration, "\(what) could not start: \(error)", fix: "check the sequence's 'command' (a list: the program, then its arguments)")
        }
    }

    /// What cancels the sequence now: an `exit` that arrived, or the session stopping.
    private func cancellation() -> String? {
        if let why = ingress?.sequenceCancelledBy { return why }
        if triggerTasks.withLock({ $0.stopping }) || Task.isCancelled { return "the session stopping" }
        return nil
    }

    /// Waits until `moment`, looking for a cancellation every 50 ms; false when cancelled.
    private func pause(until moment: ContinuousClock.Instant) async -> Bool {
        while ContinuousClock.now < moment {
            if cancellation() != nil { return false }
            try? await Task.sleep(until: min(moment, .now + .milliseconds(50)), clock: .continuous)
        }
        return true
    }
}
