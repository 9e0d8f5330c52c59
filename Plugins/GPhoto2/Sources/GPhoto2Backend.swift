#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// A capture backend for tethered cameras through libgphoto2: one camera, or several
/// fired together by each capture (`cameras:`).
///
/// Each camera's libgphoto2 runs in a worker process of its own (``CameraWorker``); this
/// process loads no camera driver. A worker that crashes or hangs is killed and started
/// again, the shot in flight is answered, and the session goes on. Photo bytes come from
/// the workers as in-memory files mapped here, never copied on the way.
public final class GPhoto2Backend: CaptureBackend, CameraLiveViewSource, BulbCapture {
    /// The type name in configs.
    public static let typeName = "gphoto2"

    /// Registers the `gphoto2` type and the `cameras` command.
    public static func register(in registry: PluginRegistry) throws {
        try registry.registerBackend(typeName, summary: "tethered cameras through libgphoto2, one or several, each in a worker process: capture, bulb, download, settings, reconnection",
                                     abilities: [.liveView, .cameraSettings, .bulbCapture]) { options, environment in
            GPhoto2Backend(options: try Options(options), log: environment.log)
        }
        try registry.registerCommand(CamerasCommand.self)
        try registry.registerCommand(CameraCommand.self)
        try registry.registerCommand(CalibrateCommand.self)
    }

    struct State {
        var context: BackendContext?
        var identities: [String: CameraIdentity] = [:]
        /// Card files handed to the session and not yet stored (or failed), by camera: a
        /// worker started again must not import them from the card as never delivered.
        var awaitingStore: [String: Set<CardPath>] = [:]
        var statuses: (cameras: [CameraStatus], time: ContinuousClock.Instant)?
        var inPhotoMode = false
        /// Each camera's values changed during the session, as asked for: every open
        /// applies them after the config's (``SettingRoles/kept(_:after:applied:)``).
        var sessionSettings: [String: [SettingChange]] = [:]
        /// Why live view cannot be had from a camera, by its name, once it said so: asked
        /// no more.
        var noLiveView: [String: String] = [:]
    }

    let options: Options
    let log: Logger
    let selections: [CameraSelection]
    let state = Mutex(State())
    private let openings = CameraOpenings()
    /// One per camera, made on first use, kept between photo-mode sessions.
    let workers: [CameraWorker]

    /// Creates a backend. Nothing starts until ``prepare(_:)``.
    public init(options: Options, log: Logger = .discarding) {
        self.options = options
        self.log = log
        selections = options.selections
        let folder = options.settingsFolder ?? Self.defaultSettingsFolder
        workers = selections.map {
            CameraWorker(name: $0.name, settingsFolder: folder, log: log, forwardingLibraryLog: options.libgphoto2Log,
                         confinement: WorkerConfinement(enabled: options.confineWorkers, tcpPorts: WorkerConfinement.tcpPorts(of: $0.port),
                                                        readPaths: options.workerReadPaths),
                         user: options.workerUser)
        }
        // Now that self exists, the workers report to it.
        for (index, selection) in selections.enumerated() {
            workers[index].connect(onEvent: { [weak self] event, descriptors in self?.handle(event, descriptors, from: selection.name) ?? descriptors.forEach { _ = close($0) } },
                                   onRestart: { [weak self] in self?.reopen(selection) })
        }
    }

    /// Whether the cameras are named in a `cameras:` list (even a list of one): each file,
    /// status and failure then carries its camera's name (and `{camera}` is that name,
    /// not the model).
    var isRig: Bool { !options.cameras.isEmpty }

    /// The camera's model once opened; with several cameras, their names.
    public var cameraName: String {
        get async {
            if isRig { return selections.map(\.name).joined(separator: ", ") }
            return state.withLock { $0.identities[selections[0].name]?.model } ?? options.model ?? "camera"
        }
    }

    // MARK: Photo mode

    /// Opens every camera (each in its worker), checks it can capture, applies settings.
    public func prepare(_ context: BackendContext) async throws {
        state.withLock { $0.context = context }
        // Every camera's open starts before any is awaited; one still under way from an
        // enter that gave up is waited for, not started again.
        let opens = zip(workers, selections).map { worker, selection in
            let request = openRequest(selection, keepTrying: false)
            return (selection.name, Task { [openings, options] in await openings.open(worker, with: request, timeout: options.openTimeout) })
        }
        var failures: [(String, ShutterError)] = []
        for (name, open) in opens {
            // Cancelled (the enter's deadline), the opens go on for the next enter.
            let result = await withTaskCancellationHandler { await open.value } onCancel: { open.cancel() }
            switch result {
            case .success(let identity): opened(identity, as: name)
            case .failure(let failure): failures.append((name, failure))
            }
        }
        if Task.isCancelled { return }
        guard failures.isEmpty else {
            for worker in workers { _ = try? await worker.request(.close) }
            throw Self.combined(failures, rig: isRig)
        }
        state.withLock { $0.inPhotoMode = true }
    }

    /// Fires every camera at once and downloads every file of every exposure.
    public func capture() async throws -> CapturedPhoto {
        try await capture(at: nil)
    }

    /// Fires every camera at `moment`: each camera thread sleeps until then by itself.
    public func capture(at moment: Date?) async throws -> CapturedPhoto {
        let due = moment.flatMap { $0.timeIntervalSinceNow > 0 ? UInt64($0.timeIntervalSince1970 * 1e9) : nil }
        return try await fire(.capture(atUnixNanoseconds: due))
    }

    /// Holds every camera's shutter open for `exposure` (bulb), each timed by its worker
    /// on the monotonic clock, and downloads every file of every exposure.
    ///
    /// Once sent, it is not given up: a worker killed mid-exposure would leave its shutter
    /// open. A caller that stops waiting (the session's deadline) leaves the worker to
    /// close the shutter; the files stay on the card.
    public func captureBulb(for exposure: Duration) async throws -> CapturedPhoto {
        let milliseconds = Int(exposure.components.seconds * 1000 + exposure.components.attoseconds / 1_000_000_000_000_000)
        return try await Task { try await self.fire(.bulb(milliseconds: max(1, milliseconds))) }.value
    }

    /// Sends `request` (a capture or a bulb) to every camera and gathers every file of
    /// every exposure into one photo.
    private func fire(_ request: WorkerRequest) async throws -> CapturedPhoto {
        // Every worker gets the order before any answer is awaited.
        let fired = workers.map { worker in (worker, sentAt: WorkerProtocol.monotonicNanoseconds(), id: worker.send(request)) }
        var files: [CapturedFile] = []
        var failures: [(String, ShutterError)] = []
        var model = selections[0].name
        var firstFired: UInt64?  // monotonic ns, the same clock in every worker
        for (worker, sentAt, id) in fired {
            do {
                let (reply, descriptors, arrivedAt) = try await worker.reply(to: id)
                defer { descriptors.forEach { _ = close($0) } }
                switch reply {
                case .captured(let captured, let firedAt, let took):
                    for (file, descriptor) in zip(captured, descriptors) {
                        var captured = CapturedFile(name: file.path.name, data: try SharedBytes.map(descriptor), camera: isRig ? worker.name : nil,
                                                    cameraPath: file.path.description, cameraSerial: serial(of: worker.name))
                        captured.previewFollows = file.previewFollows ?? false
                        files.append(captured)
                    }
                    state.withLock { $0.awaitingStore[worker.name, default: []].formUnion(captured.map(\.path)) }
                    firstFired = min(firstFired ?? firedAt, firedAt)
                    log.debug("captured", Self.timing(sentAt: sentAt, firedAt: firedAt, took: took, arrivedAt: arrivedAt, camera: worker.name))
                    model = state.withLock { $0.identities[worker.name]?.model } ?? model
                case .failed(let failure): failures.append((worker.name, failure.error))
                default: failures.append((worker.name, ShutterError(.cameraFailure, "unexpected answer to a capture: \(reply)")))
                }
            } catch let error as CancellationError {
                throw error
            } catch {
                failures.append((worker.name, ShutterError.wrapping(error, as: .cameraFailure)))
            }
        }
        if files.isEmpty { throw Self.combined(failures, rig: isRig) }
        // The moment the shutter was fired, not the end of the download.
        let sinceFired = firstFired.map { Double(WorkerProtocol.monotonicNanoseconds() &- $0) / 1e9 } ?? 0
        return CapturedPhoto(files: files, camera: isRig ? selections.map(\.name).joined(separator: ", ") : model,
                             captureTime: Date(timeIntervalSinceNow: -max(0, sinceFired)),
                             missing: failures.isEmpty ? nil : Self.combined(failures, rig: true))
    }

    /// What a capture cost, for the debug log (`scripts/bench-rig` reads it): `workerMs`
    /// the worker's capture and download, `boundaryMs` the rest of the round trip (the
    /// order to the worker, the reply back), `sentAt` when the order went out and
    /// `firedAt` when the worker began (monotonic ns, to compare a rig's cameras).
    private static func timing(sentAt: UInt64, firedAt: UInt64, took: UInt64, arrivedAt: UInt64, camera: String) -> [(String, String)] {
        let roundTrip = arrivedAt &- sentAt
        let milliseconds = { (nanoseconds: UInt64) in String(format: "%.3f", Double(nanoseconds) / 1e6) }
        return [("camera", camera), ("workerMs", milliseconds(took)), ("boundaryMs", milliseconds(roundTrip > took ? roundTrip - took : 0)),
                ("sentAt", String(sentAt)), ("firedAt", String(firedAt))]
    }

    /// Deletes the photo's files from the cards once it is archived, unless
    /// `keepOnCamera`. A photo not archived stays on the cards.
    public func finish(_ photo: CapturedPhoto, stored: Bool) async {
        // A file without a camera name is the single camera's.
        let onCards = photo.files.compactMap { file in file.cameraPath.flatMap(CardPath.init).map { (file.camera ?? workers.first?.name ?? "", $0) } }
        guard !onCards.isEmpty else { return }
        let byCamera = Dictionary(grouping: onCards, by: \.0).mapValues { $0.map(\.1) }
        // Held until the worker has the outcome: a worker opening the camera again meanwhile
        // must not take them for shots never delivered.
        defer {
            state.withLock { state in
                for (camera, paths) in byCamera { state.awaitingStore[camera]?.subtract(paths) }
            }
        }
        if stored && options.keepOnCamera {
            // Kept on the card: recorded as delivered, so a card catch-up never imports
            // them. (Deleted ones are in the worker's durable list of deletes until gone.)
            for worker in workers {
                guard let paths = byCamera[worker.name] else { continue }
                do { _ = try await worker.request(.delivered(paths)) } catch is CancellationError {
                    return
                } catch {
                    do { _ = try await worker.request(.delivered(paths)) } catch {
                        log.warning("\(photo.files.map(\.name).joined(separator: ", ")) could not be recorded as delivered: a card catch-up may import it again (\(error))", [("camera", worker.name)])
                    }
                }
            }
        }
        guard stored, !options.keepOnCamera else {
            // Why is the coordinator's to say (a sink's failure is logged as an error; a
            // pipeline without an archival sink is announced at start): here, only where.
            if !stored { log.info("\(photo.files.map(\.name).joined(separator: ", ")) kept on the camera card: not archived") }
            return
        }
        for worker in workers {
            guard let paths = byCamera[worker.name] else { continue }
            // The worker keeps the delete in a durable list and does it when the camera is
            // idle. A worker that died before it got the request: its successor gets it.
            do { _ = try await worker.request(.delete(paths)) } catch is CancellationError {
                return
            } catch {
                do { _ = try await worker.request(.delete(paths)) } catch {
                    log.warning("\(photo.files.map(\.name).joined(separator: ", ")) stays on the camera card: \(error)", [("camera", worker.name)])
                }
            }
        }
    }

    /// Releases every camera; the workers stay, ready for the next enter.
    public func stop() async {
        state.withLock { $0.inPhotoMode = false; $0.context = nil; $0.statuses = nil }
        openings.forget()
        // Every worker closes at once (each first does the card deletes still to do, for a
        // few seconds at most): a rig's exit takes one camera's time, not the sum.
        let closing = workers.map { worker in (worker, worker.send(.close)) }
        for (worker, id) in closing {
            guard let (_, descriptors, _) = try? await worker.reply(to: id) else { continue }
            descriptors.forEach { _ = close($0) }
        }
    }

    /// Battery and free card space per camera, read between shots (cached for a few
    /// seconds so status displays never wait for a camera).
    public func status() async -> [CameraStatus] {
        if let cached = state.withLock({ state -> [CameraStatus]? in
            guard let last = state.statuses, ContinuousClock.now - last.time < .seconds(5) else { return nil }
            return last.cameras
        }) { return cached }
        var cameras: [CameraStatus] = []
        for worker in workers {
            guard case .status(let battery, let free, let connected)? = try? await worker.request(.status) else { continue }
            cameras.append(CameraStatus(name: isRig ? worker.name : nil, battery: battery, freeCardBytes: free, connected: connected))
        }
        state.withLock { $0.statuses = (cameras, .now) }
        return cameras
    }

    // MARK: Helpers

    static var defaultSettingsFolder: String {
        let environment = ProcessInfo.processInfo.environment
        let state = environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? PluginOptions.expandingTilde("~/.local/state")
        return "\(state)/shutterpipe/cameras"
    }

    /// One failure, or several naming their cameras.
    static func combined(_ failures: [(String, ShutterError)], rig: Bool) -> ShutterError {
        guard rig || failures.count != 1 else { return failures[0].1 }
        let first = failures.first?.1 ?? ShutterError(.cameraFailure, "no camera answered")
        let text = failures.map { "camera '\($0.0)': \($0.1.message)" }.joined(separator: "; ")
        return ShutterError(first.cause, text, fix: first.fix)
    }
}
