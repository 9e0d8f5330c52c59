#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// A trigger that sends a script of events and records every answer it is synced.
public final class ScriptedTrigger: TriggerSource {
    /// One step of the script.
    public enum Step: Sendable {
        /// Send this event.
        case send(ShutterEvent)
        /// Wait until this many answers have arrived.
        case awaitAnswers(Int)
        /// Pause.
        case pause(Duration)
        /// Stay running until cancelled.
        case holdOpen
        /// Throw this error from `run`.
        case fail(ShutterError)
        /// Send this settings request (its answer lands in ``settingsAnswers``).
        case settings(SettingsRequest)
        /// Send this event as it is (a capture with a moment to fire at, say).
        case sendEvent(TriggerEvent)
        /// Send a capture to fire this long after the step runs (not after the script was
        /// made: a slow start cannot eat the wait).
        case captureAfter(Duration)
        /// Wait until this many have arrived at the gate (a capture held in flight).
        case awaitArrivals(Gate, Int)
        /// Let every arrival at the gate through.
        case open(Gate)
        /// Set the session label ("" clears it); its answer lands in ``labelAnswers``.
        case label(String)
        /// Run the sequence the settings plan under this name; its answer lands in
        /// ``sequenceAnswers``.
        case sequence(String)
    }

    private let steps: [Step]
    private let received = Mutex<[ShutterAnswer]>([])
    private let settingsReceived = Mutex<[SettingsAnswer]>([])
    private let labelsReceived = Mutex<[LabelAnswer]>([])
    private let sequencesReceived = Mutex<[SequenceAnswer]>([])

    /// Creates a trigger that plays `steps` and then returns.
    public init(_ steps: [Step]) {
        ignoreSIGPIPE()
        self.steps = steps
    }

    /// Sends every event in order, each with a token counting from 1.
    public convenience init(events: [ShutterEvent]) {
        self.init(events.map { .send($0) })
    }

    /// The answers synced so far, in order.
    public var answers: [ShutterAnswer] { received.withLock { $0 } }

    /// The answers to the settings requests sent so far, in the order they came.
    public var settingsAnswers: [SettingsAnswer] { settingsReceived.withLock { $0 } }

    /// The answers to the sequences asked for so far, in the order they came.
    public var sequenceAnswers: [SequenceAnswer] { sequencesReceived.withLock { $0 } }

    /// The answers to the labels sent so far, in the order they came.
    public var labelAnswers: [LabelAnswer] { labelsReceived.withLock { $0 } }

    public func run(delivering events: EventChannel) async throws {
        var token: UInt64 = 0
        for step in steps {
            switch step {
            case .send(let event):
                token += 1
                events.send(event, origin: "step \(token)", token: token)
            case .awaitAnswers(let count):
                while answers.count < count { try await Task.sleep(for: .milliseconds(2)) }
            case .pause(let duration):
                try await Task.sleep(for: duration)
            case .holdOpen:
                while true { try await Task.sleep(for: .seconds(3600)) }
            case .fail(let error):
                throw error
            case .sendEvent(let event):
                token += 1
                var event = event
                event.token = token
                events.send(event)
            case .settings(let request):
                events.send(request) { [self] answer in self.settingsReceived.withLock { $0.append(answer) } }
            case .captureAfter(let wait):
                token += 1
                events.send(TriggerEvent(.capture, origin: "step \(token)", token: token, fireAt: Date().addingTimeInterval(wait.timeInterval)))
            case .awaitArrivals(let gate, let count):
                while gate.arrivals < count { try await Task.sleep(for: .milliseconds(2)) }
            case .open(let gate):
                gate.open()
            case .label(let text):
                events.send(LabelRequest(text, origin: "test")) { [self] answer in self.labelsReceived.withLock { $0.append(answer) } }
            case .sequence(let name):
                events.send(SequenceRequest(name, origin: "test")) { [self] answer in self.sequencesReceived.withLock { $0.append(answer) } }
            }
        }
    }

    public func sync(_ answer: ShutterAnswer) async {
        received.withLock { $0.append(answer) }
    }
}

/// Tells whether captures ran while photos were being stored: a capture counts when a
/// store was running at any moment of it (at its start, at its end, or one began in
/// between). Judged over the whole capture, not at its first instant: the coordinator
/// starts a store as a task, which may reach the sink just after the next capture began.
public final class OverlapProbe: Sendable {
    private let state = Mutex<(storing: Int, storesBegun: Int, capture: (storing: Bool, begun: Int)?, overlapped: Int)>((0, 0, nil, 0))

    /// Creates a probe.
    public init() {}

    /// Captures that ran while a photo was being stored.
    public var capturesDuringStores: Int { state.withLock { $0.overlapped } }

    /// Captures that have ended.
    public var capturesEnded: Int { ended.withLock { $0 } }
    private let ended = Mutex(0)

    func storeBegan() { state.withLock { $0.storing += 1; $0.storesBegun += 1 } }
    func storeEnded() { state.withLock { $0.storing -= 1 } }
    func captureBegan() { state.withLock { $0.capture = ($0.storing > 0, $0.storesBegun) } }
    func captureEnded() {
        defer { ended.withLock { $0 += 1 } }
        state.withLock { state in
            guard let capture = state.capture else { return }
            if capture.storing || state.storing > 0 || state.storesBegun > capture.begun { state.overlapped += 1 }
            state.capture = nil
        }
    }
}

/// A backend whose behaviour a test scripts, recording every call.
public final class ScriptedBackend: CaptureBackend {
    /// A call the coordinator made.
    public enum Call: Sendable, Equatable {
        case prepare, capture, finish(stored: Bool), stop
    }

    private struct State {
        var calls: [Call] = []
        var captures = 0
        var context: BackendContext?
        var running: [Call] = []
        var maximumConcurrentCaptures = 0
        var overlappedLifecycle = false
    }

    private let prepareFailure: ShutterError?
    private let captureDelay: Duration
    private let captureFailures: [Int: ShutterError]
    private let ignoresCancellation: Bool
    private let finishDelay: Duration
    private let files: [String]
    private let partial: [Int: ShutterError]
    private let probe: OverlapProbe?
    private let captureGate: Gate?
    private let finishGate: Gate?
    private let deliversOnStop: Int?
    private let state = Mutex(State())

    /// - Parameters:
    ///   - prepareFailure: thrown by every `prepare`.
    ///   - captureDelay: how long each capture takes.
    ///   - captureFailures: thrown by the capture with that number (from 1).
    ///   - ignoresCancellation: captures (and finishes) take their delay even when cancelled.
    ///   - finishDelay: how long each `finish` takes.
    ///   - files: the extensions of each exposure's files (["JPG", "CR2"] for RAW+JPEG).
    ///   - partial: the capture with that number (from 1) delivers only its first file, with
    ///     this failure for the rest, as a rig where one camera failed.
    ///   - captureGate: each capture waits there (after its delay) until the test lets it
    ///     through: a shot held in flight, or one that hangs for good.
    ///   - finishGate: each finish waits there likewise.
    ///   - deliversOnStop: `stop` delivers a camera-button photo of this number, as a camera
    ///     does with a file it announces while photo mode is being left.
    public init(prepareFailure: ShutterError? = nil, captureDelay: Duration = .zero,
                captureFailures: [Int: ShutterError] = [:], ignoresCancellation: Bool = false, probe: OverlapProbe? = nil,
                finishDelay: Duration = .zero, files: [String] = ["JPG"], partial: [Int: ShutterError] = [:],
                captureGate: Gate? = nil, finishGate: Gate? = nil, deliversOnStop: Int? = nil) {
        self.deliversOnStop = deliversOnStop
        self.captureGate = captureGate
        self.finishGate = finishGate
        self.partial = partial
        self.probe = probe
        self.finishDelay = finishDelay
        self.files = files
        self.prepareFailure = prepareFailure
        self.captureDelay = captureDelay
        self.captureFailures = captureFailures
        self.ignoresCancellation = ignoresCancellation
    }

    /// Every call so far, in order.
    public var calls: [Call] { state.withLock { $0.calls } }
    /// The most captures that were ever running at once.
    public var maximumConcurrentCaptures: Int { state.withLock { $0.maximumConcurrentCaptures } }
    /// Whether `prepare` or `stop` ever overlapped another call.
    public var lifecycleOverlapped: Bool { state.withLock { $0.overlappedLifecycle } }

    public var cameraName: String { "scripted" }

    public func prepare(_ context: BackendContext) async throws {
        enter(.prepare)
        defer { leave(.prepare) }
        state.withLock { $0.context = context }
        if let prepareFailure { throw prepareFailure }
    }

    public func capture() async throws -> CapturedPhoto {
        let number = state.withLock { state -> Int in state.captures += 1; return state.captures }
        enter(.capture)
        probe?.captureBegan()
        defer { leave(.capture); probe?.captureEnded() }
        try await wait(captureDelay)
        try await captureGate?.pass(honouringCancellation: !ignoresCancellation)
        if let failure = captureFailures[number] { throw failure }
        var photo = Self.photo(number, extensions: files)
        if let missing = partial[number] {
            photo.files = Array(photo.files.prefix(1))
            photo.missing = missing
        }
        return photo
    }

    public func finish(_ photo: CapturedPhoto, stored: Bool) async {
        enter(.finish(stored: stored))
        defer { leave(.finish(stored: stored)) }
        try? await wait(finishDelay)
        try? await finishGate?.pass(honouringCancellation: !ignoresCancellation)
    }

    private func wait(_ delay: Duration) async throws {
        guard delay > .zero else { return }
        if ignoresCancellation {
            // Waits out the delay whatever happens to the task (but off the pool).
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().asyncAfter(deadline: .now() + delay.milliseconds / 1000) { done.resume() }
            }
        } else {
            try await Task.sleep(for: delay)
        }
    }

    public func stop() async {
        enter(.stop)
        if let deliversOnStop { pressCameraButton(deliversOnStop) }
        leave(.stop)
    }

    /// Delivers a photo as if taken with the camera's own button (after `prepare`).
    public func pressCameraButton(_ number: Int) {
        state.withLock { $0.context }?.deliver(Self.photo(number, name: "BUTTON"))
    }

    /// A photo with recognisable bytes, one file per extension.
    public static func photo(_ number: Int, name: String = "IMG", extensions: [String] = ["JPG"]) -> CapturedPhoto {
        CapturedPhoto(files: extensions.map { CapturedFile(name: "\(name)_\(number).\($0)", data: Data("photo \(number) \($0)".utf8)) },
                      camera: "scripted")
    }

    private func enter(_ call: Call) {
        state.withLock { state in
            state.calls.append(call)
            let lifecycle: (Call) -> Bool = { $0 == .prepare || $0 == .stop }
            if !state.running.isEmpty && (lifecycle(call) || state.running.contains(where: lifecycle)) {
                state.overlappedLifecycle = true
            }
            state.running.append(call)
            state.maximumConcurrentCaptures = max(state.maximumConcurrentCaptures, state.running.filter { $0 == .capture }.count)
        }
    }

    private func leave(_ call: Call) {
        state.withLock { state in
            if let index = state.running.firstIndex(of: call) { state.running.remove(at: index) }
        }
    }
}
