import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// Owns the remote-shutter flow: turns trigger events into backend and sink calls and
/// syncs the answering state back to the trigger that sent each event.
///
/// ## Rules
/// 1. **Exactly one answer per event.** Every event a trigger delivers gets exactly one
///    ``ShutterAnswer``, synced to that trigger through `TriggerSource.sync(_:)`.
/// 2. **Events are handled one at a time, in arrival order.** Captures that arrive
///    while one is running wait their turn and each gets its own answer. One overlap is
///    allowed, for speed in bursts: while the sinks store a photo, the next capture may
///    already run. At most one photo is being stored at a time, answers keep their
///    order, and every other event waits until the pending store has been answered.
/// 3. **The queue is bounded.** At most ``CoordinatorSettings/queueLimit`` events wait.
///    Beyond that a capture is answered `photoFailed` and an enter
///    `exitedOrUnableToEnter`, both at once with cause `busy`. An exit is never refused.
/// 4. **Enter** prepares the backend and answers `enteredPhotoMode`, or
///    `exitedOrUnableToEnter` with the cause. In photo mode already, it answers
///    `enteredPhotoMode` without preparing again.
/// 5. **Capture** takes one photo and hands it to every sink. It answers `photoSuccess`
///    only after every sink has stored it durably, else `photoFailed` with the first
///    failure's cause; the remaining sinks still get the photo. With several cameras,
///    one capture fires them all and is still one event with one answer: `photoSuccess`
///    with every camera's files once all are stored; when some cameras failed, the files
///    of the others are stored all the same and the answer is `photoFailed` naming the
///    cameras that failed (`CapturedPhoto.missing`).
/// 6. **Capture outside photo mode** enters first when
///    ``CoordinatorSettings/autoEnter`` is on (the default); if entering fails, the
///    capture answers `photoFailed` with that cause. With it off, the answer is
///    `photoFailed` with cause `notInPhotoMode`.
/// 7. **Exit** comes after everything queued before it, stops the backend and answers
///    `exitedOrUnableToEnter` (without a failure).
/// 8. **Unknown** is logged and changes nothing; it is answered with the current mode
///    (`enteredPhotoMode` or `exitedOrUnableToEnter`) so the device stays in sync.
/// 9. **Photos the camera took itself** get their ``ShotID`` when they arrive and take the
///    path of every shot: the sinks in order with the others, then one answer through
///    `deliver`, synced to no trigger, logged, counted and observed by every sink and
///    session observer. Every shot's id comes from one counter (``nextShot()``).
/// 10. **Deadlines.** Every backend, sink and sync call runs under a deadline from
///     ``CoordinatorSettings``; a call past it fails with cause `timeout`.
/// 11. **Shutdown.** ``run()`` returns when every trigger has returned, or after
///     ``shutdown()``: triggers are stopped, every event already queued is still
///     handled and answered, then the backend is stopped and sinks are ended.
/// 12. **The card keeps what no archive holds.** The backend learns through
///     `CaptureBackend.finish(_:stored:)` whether the photo is archived: no sink failed,
///     and every archival sink (`SinkRole.archival`; there must be at least one) listed
///     every file of the photo in its receipt. Only then may it delete the camera's copy.
///     An archival sink whose receipt misses a file has failed. The backend learns it
///     after the answer, so deleting never delays the answer; the next photo's storing
///     and the exit still wait for it.
/// 13. **A sink that cannot start stops the session before any event.** Every sink's
///     `begin()` runs before the triggers start; one that throws ends the session there.
/// 14. **A capture for a later moment** (`TriggerEvent.fireAt`) is handed to the backend
///     at its turn, with the moment; its deadline is `captureTimeout` plus the wait.
/// 15. **Setting changes are serialised with captures.** A settings request
///     (`EventChannel.send(_:answer:)`) takes its turn among the events like any other
///     (rules 2 and 3): it never runs during a capture or while a photo is being stored, a
///     capture that arrived before it is taken with the old values and one that arrived
///     after it with the new. Outside photo mode it enters first, as a capture does
///     (rule 6). It is answered, to the function that asked, with each setting as the
///     camera reads it back, or refused with the settings' choices and nothing changed.
///     A backend without `CameraSettingsControl` refuses every request. Settings requests
///     are not shutter events: they are not counted among the events answered or failed.
/// 16. **A session label is serialised with captures too.** A label
///     (`EventChannel.send(_: LabelRequest)`) takes its turn among the events: the shots
///     after it carry it (`ShotContext.label`, `ShutterAnswer.label`) until another
///     replaces it or an empty one clears it. It lives as long as the session: a restart
///     starts without one, so no shot is named after the last subject by mistake.
/// 17. **A sequence is one turn of many frames.** A sequence request
///     (`EventChannel.send(_: SequenceRequest)`) takes its turn among the events and runs
///     its plan (`sequences:` in the config) to the end before the next event: each frame
///     is a capture answered to the trigger that asked (rules 1 and 2), the setting it
///     steps changed before it as a settings request would be (rule 15). An `exit` from
///     any trigger, or the session's stop, cancels it between two frames (the exit is then
///     answered in its own turn). The settings it changed are put back as they were found,
///     and the sequence is answered once, with the frames taken, failed, skipped and
///     cancelled. An unknown name, or a plan the camera cannot step, is refused at once.
public actor ShutterCoordinator {
    let backend: any CaptureBackend
    /// What the backend's type declared it can do (live view, settings).
    let backendAbilities: Set<PluginAbility>
    /// Backends beside it that deliver shots by themselves (a hot folder); index 1… in
    /// ``Submission/cameraShot(_:backend:)``.
    let companions: [any CaptureBackend]
    /// The companions prepared at the last enter, by index.
    var preparedCompanions: [Int] = []
    let triggers: [NamedTrigger]
    let chain: SinkChain
    let session: String
    let settings: CoordinatorSettings
    let log: Logger
    let answerLog: AnswerLog
    let observer: (@Sendable (CoordinatorStatus) -> Void)?
    /// The plugins that see every answer (``SessionObserver``).
    let sessionObservers: [any SessionObserver]
    let triggerTasks = Mutex<(tasks: [Task<Void, Never>], stopping: Bool)>(([], false))
    /// The shots in flight, for status displays.
    public nonisolated let shotsInFlight: ShotTracker

    var status = CoordinatorStatus()
    /// The one shot counter: ids are `run#n` (``ShotID``).
    let runName = ShotID.newRun()
    var shotsTaken = 0
    /// The session label the next shots carry (rule 16).
    var label: String?
    /// The photos stored for each product of the shot list, by id.
    var shotListTaken: [String: Int] = [:]
    /// The place of the frame a sequence is taking now (rule 17), for its shot's context.
    var sequenceFrame: SequenceFrame?
    /// The last enter gave up waiting for the backend's prepare, which may still run.
    var enterGaveUp = false
    var ingress: Ingress?
    var pending = PendingStore()

    /// Creates a coordinator. `observer` hears the status after every change; it must
    /// return quickly. `tracker` follows the shots in flight.
    public init(
        backend: any CaptureBackend, backendAbilities: Set<PluginAbility>? = nil, companions: [any CaptureBackend] = [],
        triggers: [NamedTrigger], sinks: [NamedSink],
        session: String, settings: CoordinatorSettings = CoordinatorSettings(),
        log: Logger, observer: (@Sendable (CoordinatorStatus) -> Void)? = nil, tracker: ShotTracker = ShotTracker()
    ) {
        self.shotsInFlight = tracker
        self.backend = backend
        self.backendAbilities = backendAbilities ?? PluginAbility.implemented(by: backend)
        self.companions = companions
        self.triggers = triggers
        self.chain = SinkChain(sinks: sinks, backend: backend, settings: settings, log: log)
        self.session = session
        self.settings = settings
        self.log = log
        self.answerLog = AnswerLog(log: log)
        self.observer = observer
        // The host asks by ability: a plugin is used for what its type declared.
        self.sessionObservers = triggers.filter { $0.abilities.contains(.sessionObserver) }.compactMap { $0.source as? any SessionObserver }
            + sinks.filter { $0.abilities.contains(.sessionObserver) }.compactMap { $0.sink as? any SessionObserver }
    }

    /// Runs the pipeline until every trigger has returned or ``shutdown()`` was called,
    /// then finishes what is queued and stops. Returns the final status.
    public func run() async -> CoordinatorStatus {
        let (ordered, orderedInput) = AsyncStream.makeStream(of: Submission.self)
        let (refused, refusedInput) = AsyncStream.makeStream(of: Refusal.self)
        let ingress = Ingress(ordered: orderedInput, refused: refusedInput, limit: settings.queueLimit)
        self.ingress = ingress

        let refusalLoop = Task { for await refusal in refused { await self.answer(refusal) } }
        if !chain.archives {
            log.warning("no sink in this pipeline keeps the photos (\(chain.sinks.map(\.name).joined(separator: ", "))): every shot stays on the camera's card")
        }
        for named in chain.sinks {
            do { try await named.sink.begin() } catch {
                let message = "sink '\(named.name)' could not start: \(ShutterError.wrapping(error))"
                log.error(message)
                status.startFailures.append(message)
            }
        }
        // A sink that cannot work stops the session now, before any event (the backend was
        // not opened yet: it opens at the first enter).
        if !status.startFailures.isEmpty {
            orderedInput.finish()
            refusedInput.finish()
            await refusalLoop.value
            for sink in chain.sinks { await sink.sink.end() }
            log.info("pipeline not started: \(status.startFailures.count) sink(s) could not start")
            return status
        }
        let backend = self.backend
        let catalogue = chain.sinks.lazy.filter { $0.abilities.contains(.shotCatalogue) }.compactMap { $0.sink as? any ShotCatalogue }.first
        let liveView = backendAbilities.contains(.liveView) ? backend as? any LiveViewSource : nil
        let tracker = shotsInFlight
        var view = SessionView(liveView: liveView, cameras: { await backend.status() }, catalogue: catalogue, shotsInFlight: {
            let now = ContinuousClock.now
            return tracker.shots.map { shot in
                let phase: ShotInFlight.Phase = switch shot.phase { case .capturing: .capturing; case .downloading: .downloading; case .storing: .storing }
                var inFlight = ShotInFlight(number: shot.number, phase: phase, seconds: (now - shot.began).inSeconds, bytes: shot.bytes, total: shot.total)
                inFlight.preview = shot.preview
                return inFlight
            }
        })
        view.observeShotsInFlight = { observer in tracker.observe(observer) }
        view.sequences = settings.sequences.keys.sorted()
        for sessionObserver in sessionObservers { await sessionObserver.begin(view) }
        beginShotList()
        if settings.enterAtStart {
            if let failure = await enterPhotoMode() {
                log.error("could not enter photo mode at start (coordinator.enterAtStart): \(failure); the next enter or capture tries again")
            } else {
                log.info("photo mode entered at start (coordinator.enterAtStart)")
                observer?(status)
            }
        }
        startTriggers(into: ingress)
        for await submission in ordered {
            await handle(submission)
        }
        // A camera shot delivered while photo mode was being left is handled after the end
        // of input; its store runs in a task: answered and stored before the sinks end.
        await settlePendingStore()
        refusedInput.finish()
        await refusalLoop.value
        for sink in chain.sinks { await sink.sink.end() }
        log.info("pipeline stopped: \(status.photosStored) photo(s) stored, \(status.photosFailed) failed")
        return status
    }

    /// Asks the pipeline to stop: triggers are cancelled, queued events are still
    /// answered, then ``run()`` returns. Safe to call from any thread, more than once.
    public nonisolated func shutdown() {
        let tasks = triggerTasks.withLock { state -> [Task<Void, Never>] in
            state.stopping = true
            return state.tasks
        }
        tasks.forEach { $0.cancel() }
    }

    // MARK: Handling

    private func handle(_ submission: Submission) async {
        if !submission.overlapsPendingStore { await settlePendingStore() }  // rule 2
        switch submission {
        case .event(let request, let triggerIndex):
            ingress?.dequeued()
            let trigger = triggers[triggerIndex]
            let started = ContinuousClock.now
            switch request.event {
            case .capture:
                await capture(request, from: trigger, started: started)
            case .enter:
                let failure = await enterPhotoMode()
                await answerInOrder(ShutterAnswer(request: request, state: failure == nil ? .enteredPhotoMode : .exitedOrUnableToEnter,
                                                  failure: failure), to: trigger, started: started)
            case .exit:
                if status.inPhotoMode || enterGaveUp { await stopBackend() }
                await answerInOrder(ShutterAnswer(request: request, state: .exitedOrUnableToEnter), to: trigger, started: started)
            case .unknown:
                log.info("unknown command \(request.origin.map { "'\($0)' " } ?? "")from \(trigger.name): ignored")
                await answerInOrder(ShutterAnswer(request: request, state: currentModeState), to: trigger, started: started)
            @unknown default:
                // An event of a newer contract (the SDK grew, this coordinator did not): as unknown.
                log.info("event '\(request.event.rawValue)' from \(trigger.name) is newer than this shutterpipe: ignored, as an unknown command")
                await answerInOrder(ShutterAnswer(request: request, state: currentModeState), to: trigger, started: started)
            }
        case .settings(let request, let triggerIndex, let reply):
            ingress?.dequeued()
            await handle(request, from: triggerIndex, answer: reply)
        case .label(let request, let triggerIndex, let reply):
            ingress?.dequeued()
            handle(request, from: triggerIndex, answer: reply)
        case .sequence(let request, let triggerIndex, let reply):
            ingress?.dequeued()
            await run(request, from: triggerIndex, answer: reply)
        case .cameraShot(let photo, let index):
            await storeCameraShot(photo, from: index == 0 ? nil : companions[index - 1])
        case .endOfInput:
            if status.inPhotoMode || enterGaveUp { await stopBackend() }
            ingress?.close()
        }
    }
}
