import CDBus
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// A trigger for earbuds and headsets: an MPRIS media player on the session bus
/// (`org.mpris.MediaPlayer2.shutterpipe`), which BlueZ's `mpris-proxy` (or BlueZ itself,
/// with `bluez: true`) connects to the headset's AVRCP buttons.
///
/// Method calls (Play, Pause, Next, …) become shutter events as the `map:` says; commands
/// that are not mapped are switched off through `CanPlay`, `CanGoNext`, …. Each answering
/// state is synced back as `PlaybackStatus` and `Metadata` (`xesam:title`), announced with
/// `PropertiesChanged`: that is what the headset, a watch or a car kit sees.
public final class MPRISTrigger: TriggerSource {
    /// The type name in configs.
    public static let typeName = "mpris"

    /// MPRIS Player methods that can become events.
    public static let commands = ["Play", "Pause", "PlayPause", "Stop", "Next", "Previous"]

    /// Earbuds send Play or Pause depending on what they think the status is, so both
    /// capture; double and triple taps arrive as Next and Previous.
    public static let defaultMap: [String: ShutterEvent] = [
        "Play": .capture, "Pause": .capture, "PlayPause": .capture, "Next": .enter, "Previous": .exit,
    ]

    static let objectPath = "/org/mpris/MediaPlayer2"
    static let rootInterface = "org.mpris.MediaPlayer2"
    static let playerInterface = "org.mpris.MediaPlayer2.Player"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"

    /// The options of the `mpris` trigger.
    public struct Options: Sendable, Equatable {
        /// The name suffix: `org.mpris.MediaPlayer2.<name>`.
        public var busName = "shutterpipe"
        /// The bus to use, by address; default: the session bus (`DBUS_SESSION_BUS_ADDRESS`).
        public var busAddress: String?
        /// Commands to events.
        public var map = EventMap(MPRISTrigger.defaultMap)
        /// Also register the player with BlueZ on the system bus (`org.bluez.Media1`).
        public var bluez = false
        /// The Bluetooth adapter for `bluez`.
        public var adapter = "/org/bluez/hci0"
        /// The system bus's address, for `bluez` (default: the system bus).
        public var systemBusAddress: String?
        /// Commands per synced state (a sound through the headset).
        public var feedback = StateCommands()

        public init() {}
    }

    /// Registers the `mpris` type.
    public static func register(in registry: PluginRegistry) throws {
        try registry.registerTrigger(typeName, summary: "earbuds and headsets: an MPRIS player (BlueZ/mpris-proxy), state synced as PlaybackStatus and title") { options, environment in
            MPRISTrigger(options: try Options(options), log: environment.log)
        }
    }

    /// The player's state, as the bus sees it.
    struct PlayerState: Equatable, Sendable {
        var playbackStatus = "Stopped"
        var title = "shutterpipe"
        var shot = 0
    }

    let options: Options
    let log: Logger
    let stopped = Atomic<Bool>(false)
    let state = Mutex(PlayerState())
    let outgoing = Mutex<[PlayerState]>([])

    public init(options: Options, log: Logger = .discarding) {
        self.options = options
        self.log = log
    }

    /// Serves the player until cancelled.
    public func run(delivering events: EventChannel) async throws {
        let ready = AsyncStream<Result<Void, ShutterError>>.makeStream()
        let done = AsyncStream<Void>.makeStream()
        OwnedThread.start("shutterpipe mpris") { [self] in
            self.serve(events, ready: ready.continuation)
            done.continuation.finish()
        }
        var iterator = ready.stream.makeAsyncIterator()
        if case .failure(let error) = await iterator.next() ?? .success(()) { throw error }
        await withTaskCancellationHandler {
            for await _ in done.stream {}
        } onCancel: {
            stopped.store(true, ordering: .releasing)
        }
    }

    /// Publishes the answering state as PlaybackStatus and title, and runs its feedback.
    public func sync(_ answer: ShutterAnswer) async {
        let next = state.withLock { current -> PlayerState in
            current = Self.state(after: answer, from: current)
            return current
        }
        outgoing.withLock { $0.append(next) }
        options.feedback.run(for: answer.state, log: log)
    }

    /// What the player shows after an answer.
    static func state(after answer: ShutterAnswer, from current: PlayerState) -> PlayerState {
        var next = current
        switch answer.state {
        case .enteredPhotoMode:
            next.playbackStatus = "Playing"
            next.title = "Photo mode"
        case .photoSuccess:
            next.playbackStatus = "Playing"
            next.shot = answer.stored.first?.sequence ?? answer.shotNumber ?? current.shot  // the file's number, else the shot's
            next.title = "Photo \(next.shot) saved"
        case .photoFailed:
            next.title = "Capture failed: \(shortReason(answer.failure))"
        case .exitedOrUnableToEnter:
            next.playbackStatus = "Stopped"
            next.title = answer.failure.map { "Cannot enter photo mode: \(shortReason($0))" } ?? "Stopped"
        @unknown default:
            break  // a newer contract's state: the player keeps what it shows
        }
        return next
    }

    /// A few words a watch or a car kit can show.
    static func shortReason(_ failure: ShutterError?) -> String {
        guard let failure else { return "unknown error" }
        switch failure.cause {
        case .storageUnavailable: return failure.message.contains("card") ? "card full" : (failure.message.contains("disk full") ? "disk full" : "storage unavailable")
        case .cameraFailure: return failure.message.contains("went away") || failure.message.contains("not connected") ? "camera disconnected" : "camera error"
        case .noCamera: return "no camera"
        case .permissionDenied: return "camera in use"
        case .timeout: return "timed out"
        case .busy: return "busy"
        case .notInPhotoMode: return "not in photo mode"
        case .invalidConfiguration: return "bad settings"
        case .unexpected: return "error"
        @unknown default: return "error"  // a cause a newer contract adds
        }
    }
}

extension MPRISTrigger.Options {
    /// Reads the options of an `mpris` trigger.
    public init(_ options: PluginOptions) throws {
        self.init()
        busName = try options.string("busName", default: busName)
        guard !busName.isEmpty, busName.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." }) else {
            throw options.error("'busName' may hold letters, digits, '_' and '.'; got '\(busName)'", key: "busName")
        }
        busAddress = try options.string("busAddress")
        map = try EventMap(options, defaults: MPRISTrigger.defaultMap, known: MPRISTrigger.commands, startsSequences: true) { name in
            MPRISTrigger.commands.first { $0.caseInsensitiveCompare(name) == .orderedSame }
        }
        bluez = try options.bool("bluez", default: bluez)
        adapter = try options.string("adapter", default: adapter)
        systemBusAddress = try options.string("systemBusAddress")
        feedback = try StateCommands(options)
    }
}
