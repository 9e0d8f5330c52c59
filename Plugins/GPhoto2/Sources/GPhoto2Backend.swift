import CGPhoto2
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// A capture backend for tethered cameras through libgphoto2.
///
/// Every libgphoto2 call runs on one thread of its own (a ``BlockingQueue``), which also
/// serialises access to the camera: libgphoto2 is not thread-safe. The coordinator's
/// deadlines bound every call, so a capture never hangs a session.
public final class GPhoto2Backend: CaptureBackend {
    /// The type name in configs.
    public static let typeName = "gphoto2"

    /// The options of the `gphoto2` backend.
    public struct Options: Sendable, Equatable {
        /// Choose the camera by model name (as `shutterpipe cameras` shows it).
        public var model: String?
        /// Choose the camera by port: `usb:001,004`, `ptpip:127.0.0.1:15740:15740`.
        public var port: String?
        /// Choose the camera by serial number.
        public var serial: String?
        /// Settings to apply on enter, by key (`iso`, `shutterspeed`, `aperture`,
        /// `imageformat`, `capturetarget`, or any libgphoto2 setting name).
        public var settings: [String: String] = [:]
        /// Keep photos on the card after every sink stored them.
        public var keepOnCamera = false
        /// How often to look for shots taken with the camera's own button.
        public var eventPollInterval: Duration = .milliseconds(250)
        /// The longest wait between reconnection attempts.
        public var reconnectBackoffLimit: Duration = .seconds(5)

        /// The defaults.
        public init() {}
    }

    /// Registers the `gphoto2` type.
    public static func register(in registry: PluginRegistry) throws {
        try registry.registerBackend(typeName, summary: "tethered cameras through libgphoto2: capture, download, settings, reconnection") { options, environment in
            GPhoto2Backend(options: try Options(options), log: environment.log)
        }
        try registry.registerCommand(CamerasCommand.self)
    }

    private struct State {
        var camera: GPhotoCamera?
        var identity: (model: String, port: String, serial: String?)?
        var context: BackendContext?
        var poller: Task<Void, Never>?
        var reconnector: Task<Void, Never>?
        var reconnecting = false
        var connecting: Task<Void, any Error>?
        var outageStarted: ContinuousClock.Instant?
        var lastStatus: (status: CameraStatus, time: ContinuousClock.Instant)?
    }

    private let options: Options
    private let log: Logger
    private let queue = BlockingQueue(label: "shutterpipe.gphoto2")
    /// Touched only on `queue`'s thread (camera) or under its lock (the rest).
    private let state = Mutex(State())
    private let cameraBox = CameraBox()

    /// Creates a backend.
    public init(options: Options, log: Logger = .discarding) {
        self.options = options
        self.log = log
    }

    deinit {
        state.withLock { $0.poller?.cancel(); $0.reconnector?.cancel() }
    }

    /// The camera's model, once it has been opened.
    public var cameraName: String {
        get async { state.withLock { $0.identity?.model } ?? options.model ?? "camera" }
    }

    // MARK: Photo mode

    /// Opens the camera, checks that it can capture, and applies the settings.
    public func prepare(_ context: BackendContext) async throws {
        state.withLock { $0.context = context }
        try await connect()
        startPolling()
    }

    /// Takes a picture and downloads every file of the exposure.
    public func capture() async throws -> CapturedPhoto {
        if !cameraBox.isOpen(on: queue) {
            // During an outage: one immediate attempt, so a camera that is back is used now.
            do { try await connect(unlessOpen: true) } catch {
                throw ShutterError(.cameraFailure, "the camera is not connected; shutterpipe keeps trying to reconnect",
                                   fix: "check the cable and that the camera is on and awake")
            }
        }
        let box = cameraBox
        let queue = self.queue
        let call = CallInFlight()
        // libgphoto2 cannot be interrupted: on cancellation (the coordinator's deadline, or
        // shutdown), stop waiting for it at once; if it is still running a second later,
        // break the connection under it so its thread is free again (StuckCallBreaker).
        let result: Result<CapturedPhoto, GPhotoFailure> = try await withTaskCancellationHandler {
            try await abandoningOnCancel { try await queue.run { () throws -> Result<CapturedPhoto, GPhotoFailure> in
                call.start()
                defer { call.finish() }
                return Result { () throws(GPhotoFailure) -> CapturedPhoto in
                    guard let camera = box.camera else { throw GPhotoFailure(code: GP_ERROR_IO, operation: "capturing", detail: "camera closed") }
                    let paths = try camera.capture()
                    let files = try paths.map { path throws(GPhotoFailure) in CapturedFile(name: path.name, data: try camera.download(path)) }
                    return CapturedPhoto(files: files, camera: camera.model, backendReference: Self.reference(paths))
                }
            } }
        } onCancel: { [weak self] in
            Task.detached { await self?.breakIfStuck(call) }
        }
        switch result {
        case .success(let photo): return photo
        case .failure(let failure): throw await failed(failure, while: "capture")
        }
    }

    /// After a cancelled capture: if libgphoto2 still has not returned a second later, cuts
    /// the camera's connection so the call fails, then reconnects.
    private func breakIfStuck(_ call: CallInFlight) async {
        try? await Task.sleep(for: .seconds(1))
        guard call.isRunning, let port = state.withLock({ $0.identity?.port }) ?? options.port else { return }
        let broken = StuckCallBreaker.breakConnections(to: port)
        guard broken > 0 else {
            log.warning("a capture libgphoto2 did not return from is still holding the camera at \(port); unplug and re-plug the camera to free it")
            return
        }
        log.warning("a capture the camera never finished held libgphoto2; cut the connection to \(port) to free it; reconnecting",
                    [("event", "cameraStuck")])
        let box = cameraBox
        await queue.run { box.close() }
        startReconnecting()
    }

    /// Deletes the photo's files from the card once every sink has stored them, unless
    /// `keepOnCamera` is set. A photo not stored everywhere stays on the card.
    public func finish(_ photo: CapturedPhoto, stored: Bool) async {
        guard stored, !options.keepOnCamera, let reference = photo.backendReference else {
            // Why is the coordinator's to say (a sink's failure is logged as an error; a
            // pipeline without an archival sink is announced at start): here, only where.
            if !stored { log.info("\(photo.files.map(\.name).joined(separator: ", ")) kept on the camera card: not archived") }
            return
        }
        let paths = Self.paths(reference)
        let box = cameraBox
        let failure: GPhotoFailure? = await queue.run {
            do {
                for path in paths { try box.camera?.delete(path) }
                return nil
            } catch { return error as? GPhotoFailure }
        }
        if let failure { log.warning("could not delete the shot from the card: \(failure)") }
    }

    /// Stops polling and releases the camera.
    public func stop() async {
        let tasks = state.withLock { state -> [Task<Void, Never>] in
            defer { state.poller = nil; state.reconnector = nil; state.reconnecting = false; state.context = nil }
            return [state.poller, state.reconnector].compactMap { $0 }
        }
        tasks.forEach { $0.cancel() }
        let box = cameraBox
        await queue.run { box.close() }
    }

    /// Battery and free card space, read between shots (cached for a few seconds so
    /// status displays never wait for the camera).
    public func status() async -> CameraStatus? {
        if let cached = state.withLock({ state -> CameraStatus? in
            guard let last = state.lastStatus, ContinuousClock.now - last.time < .seconds(5) else { return nil }
            return last.status
        }) { return cached }
        let box = cameraBox
        let status: CameraStatus? = await queue.run {
            guard let camera = box.camera else { return nil }
            return CameraStatus(battery: (try? camera.setting("batterylevel"))?.value, freeCardBytes: camera.freeBytes())
        }
        state.withLock { $0.lastStatus = status.map { ($0, ContinuousClock.now) } }
        return status
    }

    // MARK: Connecting

    /// Opens the camera (closing one already open). With `unlessOpen`, a camera that
    /// another caller opened meanwhile (the reconnector and a capture racing) is kept.
    private func connect(unlessOpen: Bool = false) async throws {
        // One attempt at a time: a capture during an outage joins the reconnector's attempt
        // rather than queueing another (each can take seconds against a confused camera).
        let attempt = state.withLock { state -> (Task<Void, any Error>, Bool) in
            if unlessOpen, let running = state.connecting { return (running, false) }
            let task = Task { try await self.openCamera(unlessOpen: unlessOpen) }
            state.connecting = task
            return (task, true)
        }
        defer { if attempt.1 { state.withLock { $0.connecting = nil } } }
        try await attempt.0.value
    }

    private func openCamera(unlessOpen: Bool) async throws {
        let options = self.options
        let known = state.withLock { $0.identity }
        let box = cameraBox
        let log = self.log
        let result: Result<(String, String, String?)?, ShutterError> = await queue.run {
            Result { () throws(ShutterError) -> (String, String, String?)? in
                if unlessOpen && box.camera != nil { return nil }
                if box.camera != nil { box.close() }
                let (model, port) = try Self.select(options, known: known)
                let camera: GPhotoCamera
                do throws(GPhotoFailure) { camera = try GPhotoCamera(model: model, port: port) } catch { throw Self.openError(error, model: model, port: port) }
                let serial = camera.serialNumber()
                if let wanted = options.serial ?? known?.serial, let serial, serial != wanted {
                    camera.close()
                    throw ShutterError(.noCamera, "the camera at \(port) has serial \(serial), not \(wanted)",
                                       fix: "connect the camera with serial \(wanted), or change 'serial'")
                }
                guard camera.canCapture() else {
                    camera.close()
                    throw ShutterError(.cameraFailure, "\(model) cannot capture through libgphoto2 (its driver has no remote capture)")
                }
                try Self.apply(options.settings, to: camera, log: log)
                box.camera = camera
                box.didOpen()
                return (model, port, serial)
            }
        }
        switch result {
        case .success(nil):
            return
        case .success(let (model, port, serial)?):
            let outage = state.withLock { state -> Duration? in
                state.identity = (model, port, serial)
                defer { state.outageStarted = nil }
                return state.outageStarted.map { ContinuousClock.now - $0 }
            }
            if let outage {
                log.info("camera \(model) back at \(port) after \(formatDuration(outage))", [("event", "cameraRecovered"), ("outageMs", String(format: "%.0f", outage.milliseconds))])
            } else {
                log.info("opened \(model) at \(port)\(serial.map { ", serial \($0)" } ?? "")")
            }
        case .failure(let error):
            throw error
        }
    }

    /// Turns a failure into the answer's cause; a lost connection starts supervision.
    private func failed(_ failure: GPhotoFailure, while action: String) async -> ShutterError {
        let text = "\(failure)"
        // libgphoto2 reports a full card as GP_ERROR_NO_SPACE, or on PTP as "Out of memory
        // (Camera memorycard ran full during capture.)".
        if failure.code == GP_ERROR_NO_SPACE || text.localizedCaseInsensitiveContains("store full")
            || text.localizedCaseInsensitiveContains("ran full") {
            return ShutterError(.storageUnavailable, "the camera's card is full (\(text))", fix: "free space on the card or change it")
        }
        let box = cameraBox
        let lost = failure.lostConnection ? true : await queue.run { !(box.camera?.responds() ?? false) }
        if lost {
            await queue.run { box.close() }
            startReconnecting()
            return ShutterError(.cameraFailure, "the camera went away during \(action): \(text)",
                                fix: "check the cable and that the camera is awake; shutterpipe reconnects when it is back")
        }
        return ShutterError(.cameraFailure, "\(action) failed: \(text)")
    }

    // MARK: Supervision

    private func startReconnecting() {
        let shouldStart = state.withLock { state -> Bool in
            if state.outageStarted == nil { state.outageStarted = .now }
            guard !state.reconnecting, state.context != nil else { return false }
            state.reconnecting = true  // decided under the lock: two failures start one reconnector
            return true
        }
        guard shouldStart else { return }
        log.warning("camera connection lost; reconnecting", [("event", "cameraLost")])
        let limit = options.reconnectBackoffLimit
        let task = Task { [weak self] in
            var delay = Duration.milliseconds(200)
            while !Task.isCancelled {
                try? await Task.sleep(for: delay)
                guard let self, !Task.isCancelled else { return }
                if self.cameraBox.isOpen(on: nil) { break }
                do {
                    try await self.connect(unlessOpen: true)
                    break
                } catch {
                    delay = min(delay * 2, limit)
                }
            }
            self?.state.withLock { $0.reconnector = nil; $0.reconnecting = false }
        }
        state.withLock { $0.reconnector = task }
    }

    /// Looks for shots taken with the camera's own button and hands them over.
    private func startPolling() {
        let interval = options.eventPollInterval
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self, !Task.isCancelled else { return }
                await self.pollOnce()
            }
        }
        state.withLock { $0.poller?.cancel(); $0.poller = task }
    }

    private func pollOnce() async {
        let box = cameraBox
        let found: Result<[CapturedPhoto], GPhotoFailure> = await queue.run {
            Result { () throws(GPhotoFailure) -> [CapturedPhoto] in
                guard let camera = box.camera else { return [] }
                var photos: [CapturedPhoto] = []
                for _ in 0..<8 {
                    guard let event = try camera.nextEvent(timeoutMilliseconds: 10) else { break }
                    if case .fileAdded(let path) = event {
                        photos.append(CapturedPhoto(files: [CapturedFile(name: path.name, data: try camera.download(path))],
                                                    camera: camera.model, backendReference: Self.reference([path])))
                    }
                }
                return photos
            }
        }
        switch found {
        case .success(let photos):
            guard !photos.isEmpty, let context = state.withLock({ $0.context }) else { return }
            for photo in photos {
                log.info("shot taken on the camera: \(photo.files.map(\.name).joined(separator: ", "))")
                context.deliver(photo)
            }
        case .failure(let failure):
            if failure.lostConnection { _ = await failed(failure, while: "waiting for camera events") }
        }
    }

    // MARK: References

    static func reference(_ paths: [GPhotoCamera.CameraPath]) -> String {
        paths.map { "\($0.folder)/\($0.name)" }.joined(separator: "\n")
    }

    static func paths(_ reference: String) -> [GPhotoCamera.CameraPath] {
        reference.split(separator: "\n").map { line in
            let text = String(line)
            let slash = text.lastIndex(of: "/") ?? text.startIndex
            return GPhotoCamera.CameraPath(folder: String(text[..<slash]), name: String(text[text.index(after: slash)...]))
        }
    }
}

/// The open camera, confined to the backend's queue thread: it is read and written only
/// inside `queue.run` closures, which run one at a time on that one thread.
private final class CameraBox: @unchecked Sendable {
    var camera: GPhotoCamera?
    private let open = Atomic<Bool>(false)

    func close() {
        camera?.close()
        camera = nil
        open.store(false, ordering: .releasing)
    }

    /// Whether a camera is open, readable from any thread.
    func isOpen(on _: BlockingQueue?) -> Bool { open.load(ordering: .acquiring) }

    func didOpen() { open.store(true, ordering: .releasing) }
}
