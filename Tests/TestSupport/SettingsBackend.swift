import Foundation
import ShutterPipeKit
import Synchronization

/// What happened when, across test doubles: "capture 1 began", "store 1 ended", "apply
/// began". Tells whether two things overlapped.
public final class Timeline: Sendable {
    private let entries = Mutex<[String]>([])

    /// Creates an empty timeline.
    public init() {}

    /// Notes one thing.
    public func note(_ entry: String) { entries.withLock { $0.append(entry) } }

    /// Everything noted, in order.
    public var all: [String] { entries.withLock { $0 } }

    /// Whether `entry` was noted, and where.
    public func index(of entry: String) -> Int? { all.firstIndex(of: entry) }
}

/// A backend with one camera setting, `iso` (choices 100, 200, 400, 800): each photo's
/// name says the ISO it was taken at ("ISO400_2.JPG"). Captures take `captureDelay`;
/// every call is noted on the timeline, so a test sees what overlapped.
public final class SettingsBackend: CaptureBackend, CameraSettingsControl {
    public static let choices = ["100", "200", "400", "800"]
    private let timeline: Timeline
    private let captureDelay: Duration
    private let captureGate: Gate?
    private let state = Mutex<(iso: String, captures: Int, prepares: Int)>(("100", 0, 0))

    /// Creates a backend noting on `timeline`; each capture waits at `captureGate`, if
    /// given, until the test lets it through.
    public init(timeline: Timeline, captureDelay: Duration = .milliseconds(50), captureGate: Gate? = nil) {
        self.timeline = timeline
        self.captureDelay = captureDelay
        self.captureGate = captureGate
    }

    /// How many times it was prepared.
    public var prepares: Int { state.withLock { $0.prepares } }

    public var cameraName: String { "settings" }

    public func prepare(_ context: BackendContext) async throws {
        state.withLock { $0.prepares += 1 }
    }

    /// When each capture began.
    public var captureStarts: [Date] { starts.withLock { $0 } }
    private let starts = Mutex<[Date]>([])

    /// Waits for the moment on a thread of its own, as a camera backend does: a starved
    /// cooperative pool (the start of a full test run) cannot make it late.
    public func capture(at moment: Date?) async throws -> CapturedPhoto {
        if let moment, moment.timeIntervalSinceNow > 0 {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                Thread { Thread.sleep(until: moment); done.resume() }.start()
            }
        }
        return try await capture()
    }

    public func capture() async throws -> CapturedPhoto {
        let (number, iso) = state.withLock { state -> (Int, String) in state.captures += 1; return (state.captures, state.iso) }
        starts.withLock { $0.append(Date()) }
        timeline.note("capture \(number) began")
        try await Task.sleep(for: captureDelay)
        try await captureGate?.pass()
        // The value at the end counts too: a change during the exposure would show.
        let after = state.withLock { $0.iso }
        timeline.note("capture \(number) ended")
        return CapturedPhoto(files: [CapturedFile(name: "ISO\(iso == after ? iso : "\(iso)-\(after)")_\(number).JPG", data: Data("photo \(number)".utf8))],
                             camera: "settings")
    }

    public func stop() async {}

    private var setting: CameraSetting {
        CameraSetting(key: "iso", label: "ISO Speed", kind: .menu, value: state.withLock { $0.iso }, choices: Self.choices)
    }

    public func settings(_ keys: [String], camera: String?) async throws -> [CameraSetting] {
        timeline.note("read")
        guard keys.allSatisfy({ $0 == "iso" }) else {
            throw SettingsRefusal(ShutterError(.invalidConfiguration, "no setting \(keys)"))
        }
        return [setting]
    }

    public func apply(_ changes: [SettingChange], camera: String?) async throws -> [CameraSetting] {
        timeline.note("apply began")
        defer { timeline.note("apply ended") }
        try await Task.sleep(for: .milliseconds(20))
        for change in changes where change.key != "iso" || !Self.choices.contains(change.value) {
            throw SettingsRefusal(ShutterError(.invalidConfiguration, "\(change.key) '\(change.value)' is not offered; choices: \(Self.choices.joined(separator: ", "))"),
                                  settings: change.key == "iso" ? [setting] : [])
        }
        for change in changes { state.withLock { $0.iso = change.value } }
        return [setting]
    }
}
