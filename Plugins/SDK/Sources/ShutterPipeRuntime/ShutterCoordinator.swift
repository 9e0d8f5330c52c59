import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// How the coordinator behaves; the `coordinator:` block of the config.
public struct CoordinatorSettings: Sendable, Equatable {
    /// Whether a capture outside photo mode enters photo mode first. Default on.
    public var autoEnter: Bool = true
    /// How many events may wait behind the one being handled. Beyond it, a capture is
    /// answered ``ShutterState/photoFailed`` and an enter
    /// ``ShutterState/exitedOrUnableToEnter``, both with ``FailureCause/busy``.
    public var queueLimit: Int = 16
    /// The deadline for entering photo mode (opening the camera).
    public var enterTimeout: Duration = .seconds(30)
    /// The deadline for one capture, download included. Long exposures need more.
    public var captureTimeout: Duration = .seconds(60)
    /// The deadline for one sink to store one photo.
    public var storeTimeout: Duration = .seconds(60)
    /// The deadline for leaving photo mode.
    public var exitTimeout: Duration = .seconds(15)
    /// The deadline for a trigger to take an answer.
    public var syncTimeout: Duration = .seconds(5)

    /// The defaults.
    public init() {}
}

/// A trigger with the name it has in this pipeline.
public struct NamedTrigger: Sendable {
    /// The instance name ("stdin", or the config's `name:`).
    public var name: String
    /// The trigger.
    public var source: any TriggerSource
    /// Creates one.
    public init(name: String, source: any TriggerSource) {
        self.name = name
        self.source = source
    }
}

/// A sink with the name it has in this pipeline.
public struct NamedSink: Sendable {
    /// The instance name ("files", or the config's `name:`).
    public var name: String
    /// The sink.
    public var sink: any PhotoSink
    /// Creates one.
    public init(name: String, sink: any PhotoSink) {
        self.name = name
        self.sink = sink
    }
}

/// What the coordinator has done so far, for status displays.
public struct CoordinatorStatus: Sendable, Equatable {
    /// Whether photo mode is on.
    public var inPhotoMode = false
    /// Photos stored by every sink.
    public var photosStored = 0
    /// Captures that failed.
    public var photosFailed = 0
    /// Events answered, refusals included.
    public var eventsAnswered = 0
    /// Events refused because the queue was full.
    public var eventsRefused = 0
    /// How long the last successful shot took, from dequeuing to stored.
    public var lastShotDuration: Duration?
    /// When the last photo was stored.
    public var lastShotTime: Date?
    /// Trigger setup failures, as messages.
    public var triggerFailures: [String] = []

    /// All zero.
    public init() {}
}

/// Owns the remote-shutter flow: turns trigger events into backend and sink calls and
/// syncs the answering state back to the trigger that sent each event.
///
/// ## Rules
/// 1. **Exactly one answer per event.** Every event a trigger delivers gets exactly one
///    ``ShutterAnswer``, synced to that trigger through ``TriggerSource/sync(_:)``.
/// 2. **Events are handled one at a time, in arrival order.** Captures that arrive
///    while one is running wait their turn and each gets its own answer. One overlap is
///    allowed, for speed in bursts: while the sinks store a photo, the next capture may
///    already run. At most one photo is being stored at a time, answers keep their
///    order, and every other event waits until the pending store has been answered.
/// 3. **The queue is bounded.** At most ``CoordinatorSettings/queueLimit`` events wait.
///    Beyond that a capture is answered ``ShutterState/photoFailed`` and an enter
///    ``ShutterState/exitedOrUnableToEnter``, both at once with
///    ``FailureCause/busy``. An exit is never refused.
/// 4. **Enter** prepares the backend and answers ``ShutterState/enteredPhotoMode``, or
///    ``ShutterState/exitedOrUnableToEnter`` with the cause. In photo mode already, it
///    answers ``ShutterState/enteredPhotoMode`` without preparing again.
/// 5. **Capture** takes one photo and hands it to every sink. It answers
///    ``ShutterState/photoSuccess`` only after every sink has stored it durably, else
///    ``ShutterState/photoFailed`` with the first failure's cause. The backend learns
///    the outcome through ``CaptureBackend/finish(_:stored:)`` and keeps a photo that
///    was not stored everywhere.
/// 6. **Capture outside photo mode** enters first when
///    ``CoordinatorSettings/autoEnter`` is on (the default); if entering fails, the
///    capture answers ``ShutterState/photoFailed`` with that cause. With it off, the
///    answer is ``ShutterState/photoFailed`` with ``FailureCause/notInPhotoMode``.
/// 7. **Exit** comes after everything queued before it, stops the backend and answers
///    ``ShutterState/exitedOrUnableToEnter`` (without a failure).
/// 8. **Unknown** is logged and changes nothing; it is answered with the current mode
///    (``ShutterState/enteredPhotoMode`` or ``ShutterState/exitedOrUnableToEnter``) so
///    the device stays in sync.
/// 9. **Photos the camera took itself** go to the sinks in order with the other shots.
/// 10. **Deadlines.** Every backend, sink and sync call runs under a deadline from
///     ``CoordinatorSettings``; a call past it fails with ``FailureCause/timeout``.
/// 11. **Shutdown.** ``run()`` returns when every trigger has returned, or after
///     ``shutdown()``: triggers are stopped, every event already queued is still
///     handled and answered, then the backend is stopped and sinks are ended.
public actor ShutterCoordinator {
    private let backend: any CaptureBackend
    private let triggers: [NamedTrigger]
    private let sinks: [NamedSink]
    private let session: String
    private let settings: CoordinatorSettings
    private let log: Logger
    private let observer: (@Sendable (CoordinatorStatus) -> Void)?
    private let triggerTasks = Mutex<(tasks: [Task<Void, Never>], stopping: Bool)>(([], false))

    private var status = CoordinatorStatus()
    private var shotNumber = 0
    private var ingress: Ingress?
    /// The photo being stored while the next capture runs (rule 2), answered by itself.
    private var pendingStore: Task<Void, Never>?

    /// Creates a coordinator. `observer` hears the status after every change; it must
    /// return quickly.
    public init(
        backend: any CaptureBackend, triggers: [NamedTrigger], sinks: [NamedSink],
        session: String, settings: CoordinatorSettings = CoordinatorSettings(),
        log: Logger, observer: (@Sendable (CoordinatorStatus) -> Void)? = nil
    ) {
        self.backend = backend
        self.triggers = triggers
        self.sinks = sinks
        self.session = session
        self.settings = settings
        self.log = log
        self.observer = observer
    }

    /// Runs the pipeline until every trigger has returned or ``shutdown()`` was called,
    /// then finishes what is queued and stops. Returns the final status.
    public func run() async -> CoordinatorStatus {
        let (ordered, orderedInput) = AsyncStream.makeStream(of: Submission.self)
        let (refused, refusedInput) = AsyncStream.makeStream(of: Refusal.self)
        let ingress = Ingress(ordered: orderedInput, refused: refusedInput, limit: settings.queueLimit)
        self.ingress = ingress

        let refusalLoop = Task { for await refusal in refused { await self.answer(refusal) } }
        for named in sinks {
            do { try await named.sink.begin() } catch { log.error("sink '\(named.name)' could not start: \(ShutterError.wrapping(error))") }
        }
        startTriggers(into: ingress)
        for await submission in ordered {
            await handle(submission)
        }
        refusedInput.finish()
        await refusalLoop.value
        for sink in sinks { await sink.sink.end() }
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

    // MARK: Triggers

    private func startTriggers(into ingress: Ingress) {
        let log = self.log
        let tasks = triggers.enumerated().map { index, trigger in
            let channel = EventChannel { ingress.submit($0, from: index) }
            return Task.detached {
                do {
                    try await trigger.source.run(delivering: channel)
                } catch is CancellationError {
                } catch {
                    let message = "trigger '\(trigger.name)' stopped: \(ShutterError.wrapping(error))"
                    log.error(message)
                    await self.recordTriggerFailure(message)
                }
            }
        }
        let stopping = triggerTasks.withLock { state -> Bool in
            state.tasks = tasks
            return state.stopping
        }
        if stopping { tasks.forEach { $0.cancel() } }
        Task {
            for task in tasks { await task.value }
            ingress.submitEndOfInput()
        }
    }

    private func recordTriggerFailure(_ message: String) {
        status.triggerFailures.append(message)
    }

    // MARK: Handling

    private func handle(_ submission: Submission) async {
        switch submission {
        case .event(let request, let triggerIndex):
            ingress?.dequeued()
            let trigger = triggers[triggerIndex]
            let started = ContinuousClock.now
            if request.event == .capture {
                await capture(request, from: trigger, started: started)
                return
            }
            await finishPendingStore()
            var answer: ShutterAnswer
            switch request.event {
            case .enter: answer = await enter(request)
            case .capture: return
            case .exit: answer = await exit(request)
            case .unknown:
                log.info("unknown command \(request.origin.map { "'\($0)' " } ?? "")from \(trigger.name): ignored")
                answer = ShutterAnswer(request: request, state: currentModeState)
            }
            answer.duration = ContinuousClock.now - started
            if answer.state == .photoSuccess {
                status.lastShotDuration = answer.duration
            }
            await deliver(answer, to: trigger)
        case .cameraShot(let photo):
            await finishPendingStore()
            let started = ContinuousClock.now
            shotNumber += 1
            let outcome = await store(photo, shotNumber: shotNumber, trigger: "camera")
            let elapsed = ContinuousClock.now - started
            if let failure = outcome.failure {
                log.error("camera shot #\(shotNumber) not stored after \(formatDuration(elapsed)): \(failure)",
                          [("event", "cameraShot"), ("state", ShutterState.photoFailed.rawValue), ("cause", failure.cause.rawValue), ("ms", Self.ms(elapsed))])
            } else {
                status.lastShotDuration = elapsed
                log.info("camera shot #\(shotNumber) → photoSuccess in \(formatDuration(elapsed)): \(outcome.files.map(\.location).joined(separator: " "))",
                         [("event", "cameraShot"), ("state", ShutterState.photoSuccess.rawValue), ("ms", Self.ms(elapsed)), ("files", outcome.files.map(\.location).joined(separator: " "))])
            }
            observer?(status)
        case .endOfInput:
            await finishPendingStore()
            if status.inPhotoMode { await stopBackend() }
            ingress?.close()
        }
    }

    private var currentModeState: ShutterState {
        status.inPhotoMode ? .enteredPhotoMode : .exitedOrUnableToEnter
    }

    private func enter(_ request: TriggerEvent) async -> ShutterAnswer {
        if let failure = await enterPhotoMode() {
            return ShutterAnswer(request: request, state: .exitedOrUnableToEnter, failure: failure)
        }
        return ShutterAnswer(request: request, state: .enteredPhotoMode)
    }

    /// Prepares the backend unless photo mode is on; returns the failure, if any.
    private func enterPhotoMode() async -> ShutterError? {
        guard !status.inPhotoMode else { return nil }
        let backend = self.backend
        let context = BackendContext(log: log.named("backend")) { [ingress] photo in
            ingress?.submitCameraShot(photo)
        }
        do {
            try await withDeadline(settings.enterTimeout, "entering photo mode") {
                try await backend.prepare(context)
            }
            status.inPhotoMode = true
            return nil
        } catch {
            return ShutterError.wrapping(error, as: .cameraFailure)
        }
    }

    /// Takes a photo and leaves it to a store task, which answers; a failure before that
    /// is answered here. Either way the previous store is answered first.
    private func capture(_ request: TriggerEvent, from trigger: NamedTrigger, started: ContinuousClock.Instant) async {
        if !status.inPhotoMode {
            await finishPendingStore()
            guard settings.autoEnter else {
                status.photosFailed += 1
                await answer(ShutterAnswer(request: request, state: .photoFailed, failure: ShutterError(
                    .notInPhotoMode, "not in photo mode",
                    fix: "send enter first, or set coordinator.autoEnter: true")), to: trigger, started: started)
                return
            }
            if let failure = await enterPhotoMode() {
                status.photosFailed += 1
                await answer(ShutterAnswer(request: request, state: .photoFailed, failure: failure), to: trigger, started: started)
                return
            }
        }
        shotNumber += 1
        let number = shotNumber
        let backend = self.backend
        let photo: CapturedPhoto
        let captureStarted = ContinuousClock.now
        do {
            photo = try await withDeadline(settings.captureTimeout, "capture") { try await backend.capture() }
        } catch {
            await finishPendingStore()
            status.photosFailed += 1
            var failed = ShutterAnswer(request: request, state: .photoFailed,
                                       failure: ShutterError.wrapping(error, as: .cameraFailure), shotNumber: number)
            failed.captureDuration = ContinuousClock.now - captureStarted
            await answer(failed, to: trigger, started: started)
            return
        }
        let captureDuration = ContinuousClock.now - captureStarted
        await finishPendingStore()
        pendingStore = Task {
            let storeStarted = ContinuousClock.now
            let outcome = await self.store(photo, shotNumber: number, trigger: trigger.name)
            var stored = ShutterAnswer(
                request: request, state: outcome.failure == nil ? .photoSuccess : .photoFailed,
                failure: outcome.failure, stored: outcome.files, shotNumber: number, warnings: outcome.warnings)
            stored.captureDuration = captureDuration
            stored.storeDuration = ContinuousClock.now - storeStarted
            await self.answer(stored, to: trigger, started: started)
        }
    }

    /// Waits until the photo being stored has been answered.
    private func finishPendingStore() async {
        guard let task = pendingStore else { return }
        pendingStore = nil
        await task.value
    }

    private func answer(_ answer: ShutterAnswer, to trigger: NamedTrigger, started: ContinuousClock.Instant) async {
        var answer = answer
        answer.duration = ContinuousClock.now - started
        if answer.state == .photoSuccess { status.lastShotDuration = answer.duration }
        await deliver(answer, to: trigger)
    }

    /// Hands a photo to every sink, then tells the backend whether all stored it.
    private func store(_ photo: CapturedPhoto, shotNumber: Int, trigger: String) async
        -> (files: [StoredFile], warnings: [String], failure: ShutterError?) {
        var context = ShotContext(session: session, shotNumber: shotNumber, captureTime: photo.captureTime,
                                  camera: photo.camera, trigger: trigger)
        var files: [StoredFile] = []
        var warnings: [String] = []
        var failure: ShutterError?
        for named in sinks {
            let sink = named.sink
            context.storedSoFar = files
            let shot = context
            do {
                let receipt = try await withDeadline(settings.storeTimeout, "sink '\(named.name)'") {
                    try await sink.store(photo, context: shot)
                }
                files += receipt.files
                warnings += receipt.warnings
            } catch {
                let error = ShutterError.wrapping(error)
                log.error("sink '\(named.name)' failed for shot #\(shotNumber): \(error)")
                if failure == nil { failure = error }
            }
        }
        let stored = failure == nil
        let backend = self.backend
        _ = try? await withDeadline(settings.exitTimeout, "releasing the photo") {
            await backend.finish(photo, stored: stored)
        }
        if stored {
            status.photosStored += 1
            status.lastShotTime = Date()
        } else {
            status.photosFailed += 1
        }
        return (files, warnings, failure)
    }

    private func exit(_ request: TriggerEvent) async -> ShutterAnswer {
        if status.inPhotoMode { await stopBackend() }
        return ShutterAnswer(request: request, state: .exitedOrUnableToEnter)
    }

    private func stopBackend() async {
        let backend = self.backend
        do {
            try await withDeadline(settings.exitTimeout, "leaving photo mode") { await backend.stop() }
        } catch {
            log.warning("backend did not stop cleanly: \(ShutterError.wrapping(error))")
        }
        status.inPhotoMode = false
    }

    // MARK: Answers

    private func answer(_ refusal: Refusal) async {
        let event = refusal.request.event
        let failure: ShutterError? = event == .unknown ? nil : ShutterError(
            .busy, "\(settings.queueLimit) events are already waiting",
            fix: "wait for the answers, or raise coordinator.queueLimit")
        status.eventsRefused += 1
        if event == .capture { status.photosFailed += 1 }
        let answer = ShutterAnswer(request: refusal.request, state: event == .capture ? .photoFailed : currentModeState,
                                   failure: failure)
        await deliver(answer, to: triggers[refusal.trigger])
    }

    private func deliver(_ answer: ShutterAnswer, to trigger: NamedTrigger) async {
        status.eventsAnswered += 1
        logAnswer(answer, from: trigger.name)
        let source = trigger.source
        do {
            try await withDeadline(settings.syncTimeout, "trigger '\(trigger.name)' taking the answer") {
                await source.sync(answer)
            }
        } catch {
            log.warning("\(ShutterError.wrapping(error))")
        }
        for named in sinks { await named.sink.observe(answer) }
        observer?(status)
    }

    private func logAnswer(_ answer: ShutterAnswer, from trigger: String) {
        let event = answer.request.event.rawValue
        var fields: [(String, String)] = [
            ("event", event), ("trigger", trigger), ("state", answer.state.rawValue), ("ms", Self.ms(answer.duration)),
        ]
        if let origin = answer.request.origin { fields.append(("origin", origin)) }
        if let shot = answer.shotNumber { fields.append(("shot", String(shot))) }
        if let capture = answer.captureDuration { fields.append(("captureMs", Self.ms(capture))) }
        if let store = answer.storeDuration { fields.append(("storeMs", Self.ms(store))) }
        var message = "\(event) from \(trigger) → \(answer.state.rawValue) in \(formatDuration(answer.duration))"
        if let failure = answer.failure {
            fields += [("cause", failure.cause.rawValue), ("message", failure.description)]
            message += ": \(failure.cause.rawValue): \(failure)"
        } else if !answer.stored.isEmpty {
            let locations = answer.stored.map(\.location).joined(separator: " ")
            fields.append(("files", locations))
            message += ": \(locations)"
        }
        if !answer.warnings.isEmpty {
            fields.append(("warnings", answer.warnings.joined(separator: "; ")))
            message += " (warning: \(answer.warnings.joined(separator: "; ")))"
        }
        log.log(answer.failure == nil ? .info : (answer.state == .photoFailed ? .error : .warning), message, fields)
    }

    private static func ms(_ duration: Duration) -> String {
        String(format: "%.1f", duration.milliseconds)
    }
}

// MARK: - Ingress

private enum Submission: Sendable {
    case event(TriggerEvent, trigger: Int)
    case cameraShot(CapturedPhoto)
    case endOfInput
}

private struct Refusal: Sendable {
    var request: TriggerEvent
    var trigger: Int
}

/// Where events enter the coordinator from any thread: counts what waits, refuses past
/// the bound, keeps arrival order.
private final class Ingress: Sendable {
    private let ordered: AsyncStream<Submission>.Continuation
    private let refused: AsyncStream<Refusal>.Continuation
    private let limit: Int
    private let state = Mutex<(waiting: Int, closed: Bool)>((0, false))

    init(ordered: AsyncStream<Submission>.Continuation, refused: AsyncStream<Refusal>.Continuation, limit: Int) {
        self.ordered = ordered
        self.refused = refused
        self.limit = limit
    }

    func submit(_ request: TriggerEvent, from trigger: Int) {
        state.withLock { state in
            guard !state.closed else { return }
            if request.event != .exit && state.waiting >= limit {
                refused.yield(Refusal(request: request, trigger: trigger))
            } else {
                state.waiting += 1
                ordered.yield(.event(request, trigger: trigger))
            }
        }
    }

    func submitCameraShot(_ photo: CapturedPhoto) {
        state.withLock { state in
            guard !state.closed else { return }
            ordered.yield(.cameraShot(photo))
        }
    }

    func submitEndOfInput() {
        state.withLock { state in
            guard !state.closed else { return }
            ordered.yield(.endOfInput)
        }
    }

    func dequeued() {
        state.withLock { $0.waiting -= 1 }
    }

    func close() {
        state.withLock { state in
            state.closed = true
            ordered.finish()
        }
    }
}
