import CGPhoto2
import Foundation
import GPhoto2Backend
import ShutterPipeKit
import ShutterPipeSupport

/// One camera in a worker: opening it, capturing and downloading, deleting, its status,
/// the shots taken with its own button, and reconnecting by itself when it goes away.
///
/// Confined to the worker's camera thread (libgphoto2 is not thread-safe): every method
/// runs there, one at a time.
final class CameraSession: @unchecked Sendable {
    private(set) var camera: GPhotoCamera?
    private(set) var selection: CameraSelection?
    /// The values changed during the session, as asked for: every reopen applies them
    /// after the selection's (``CameraSelection/withSessionSettings(_:)``). Actions are
    /// never kept (``SettingRoles``).
    var sessionSettings: [SettingChange] = []
    private var identity: CameraIdentity?
    let reconnection = Reconnection()
    /// The last reconnection failure logged: the next is logged when it says otherwise.
    private var lastReconnectFailure: String?
    /// The files this worker downloaded that are still on the card.
    private var card = CardLedger()
    /// Runs the deletes of a card file that are queued behind the request running now.
    var runQueuedDeletes: (CardPath) -> Void = { _ in }
    /// Runs the live-view frames asked for while a capture waits for its exposure.
    var runQueuedPreviews: () -> Void = {}
    /// Whether this worker has had the camera open: a fresh one (started again after a
    /// crash) may find the camera still closing the dead worker's connection.
    private var hadCamera = false
    private let started = ContinuousClock.now
    private let send: @Sendable (WorkerMessage, [Int32]) -> Void

    init(send: @escaping @Sendable (WorkerMessage, [Int32]) -> Void) {
        self.send = send
    }

    /// How often to poll the camera between requests.
    var pollInterval: Duration { reconnection.pollInterval }

    /// Answers one request.
    func handle(_ request: WorkerRequest) -> (WorkerReply, [Int32]) {
        switch request {
        case .open(let selection, let poll, let limit, let keepTrying):
            // The backend's selection already carries the session's changes.
            self.selection = selection
            sessionSettings = selection.replay
            reconnection.configure(pollMilliseconds: poll, limitMilliseconds: limit)
            return (open(keepTrying: keepTrying), [])
        case .capture(let moment):
            // The wait ends here, on the thread that fires: nothing hops between the
            // wake-up and the camera's command.
            if let moment { WallClock.sleep(until: Date(timeIntervalSince1970: Double(moment) / 1e9)) }
            return capture()
        case .delete(let paths):
            return (delete(paths), [])
        case .preview:
            return preview()
        case .status:
            guard let camera else { return (.status(battery: nil, freeCardBytes: nil, connected: false), []) }
            return (.status(battery: (try? camera.setting(named: "batterylevel"))?.value, freeCardBytes: camera.freeBytes(), connected: true), [])
        case .close:
            close()
            selection = nil
            return (.done, [])
        case .list(let ports):
            let (cameras, problem) = CameraList.reports(ports: ports)
            return (.cameras(cameras, problem: problem), [])
        case .abandon:
            return (.done, [])
        case .readSettings(let keys):
            return (readSettings(keys), [])
        case .applySettings(let changes):
            return (applySettings(changes), [])
        }
    }

    func close() {
        camera?.close()
        camera = nil
    }

    // MARK: Opening

    private func open(keepTrying: Bool) -> WorkerReply {
        guard let selection else { return .failed(WorkerFailure(ShutterError(.noCamera, "no camera selected"))) }
        close()
        do throws(ShutterError) {
            // An enter takes the config's settings all or none; a reopen after a restart
            // comes back whatever they are.
            let opened = try CameraOpening.open(selection, known: identity, strict: !keepTrying)
            camera = opened.camera
            hadCamera = true
            let known = CameraIdentity(model: opened.camera.model, port: opened.camera.port, serial: opened.camera.serialNumber())
            identity = known
            reconnection.connected()
            lastReconnectFailure = nil
            drop(opened.dropped)
            return .opened(known)
        } catch {
            if keepTrying {
                reconnection.lost()
                logReconnectFailure(error)
            }
            return .failed(WorkerFailure(error))
        }
    }

    /// Between requests: polls for button shots, or tries to reconnect when due.
    func tick() {
        if let camera {
            pollButtonShots(camera)
        } else if selection != nil, reconnection.isDue() {
            reconnect()
        }
    }

    private func reconnect() {
        guard let selection else { return }
        do throws(ShutterError) {
            let opened = try CameraOpening.open(selection.withSessionSettings(sessionSettings), known: identity, strict: false)
            camera = opened.camera
            hadCamera = true
            let known = CameraIdentity(model: opened.camera.model, port: opened.camera.port,
                                       serial: opened.camera.serialNumber() ?? identity?.serial)
            identity = known
            let outage = reconnection.connected()
            lastReconnectFailure = nil
            drop(opened.dropped)
            // The card may have been changed or emptied while the camera was away.
            let forgotten = card.revalidate { file in
                guard let info = opened.camera.info(file.path) else { return false }
                return info.size == file.size && info.modified == file.modified
            }
            if forgotten > 0 { WorkerLog.debug("\(forgotten) downloaded file(s) no longer on the card as they were: forgotten") }
            send(.event(.recovered(known, outageMilliseconds: outage?.milliseconds ?? 0)), [])
        } catch {
            reconnection.failedAttempt()
            logReconnectFailure(error)
        }
    }

    /// Why a reconnection failed, in the log: the first time, and whenever the reason
    /// changes (not at every attempt of a long outage).
    private func logReconnectFailure(_ error: ShutterError) {
        let text = error.description
        guard text != lastReconnectFailure else { return WorkerLog.debug("reconnection failed again: \(text)") }
        lastReconnectFailure = text
        WorkerLog.warning("could not reopen the camera: \(text); trying again")
    }

    /// Settings a reopen could not apply: said once, with the camera's reason, and no
    /// longer replayed (here and, through the event, in the backend).
    private func drop(_ refused: [CameraOpening.Refused]) {
        guard !refused.isEmpty else { return }
        for item in refused {
            WorkerLog.warning("\(item.change.key)=\(item.change.value) could not be applied again on reopening the camera: \(item.reason); "
                + "left out from now on (set it again once the camera takes it)")
        }
        let keys = refused.map(\.change.key)
        sessionSettings.removeAll { kept in keys.contains { SettingNames.key($0, names: kept.key) || SettingNames.key(kept.key, names: $0) } }
        send(.event(.settingsDropped(keys)), [])
    }

    // MARK: Capture

    /// How long a fresh worker's first capture waits for the camera to be opened.
    static let freshWorkerPatience: Duration = .seconds(3)

    private func capture() -> (WorkerReply, [Int32]) {
        let fired = WorkerProtocol.monotonicNanoseconds()
        if camera == nil, selection != nil { reconnect() }  // during an outage: one attempt now
        // A worker started again moments ago (after a crash): the camera may still be
        // letting go of the dead worker's session. Keep trying for a little while.
        while camera == nil, selection != nil, !hadCamera, ContinuousClock.now - started < Self.freshWorkerPatience {
            Thread.sleep(forTimeInterval: 0.1)
            reconnect()
        }
        guard let camera else {
            return (.failed(WorkerFailure(ShutterError(.cameraFailure, "the camera is not connected; shutterpipe keeps trying to reconnect",
                                                       fix: "check the cable and that the camera is on and awake"))), [])
        }
        var files: [WorkerFile] = []
        var descriptors: [Int32] = []
        do throws(GPhotoFailure) {
            let exposure = try camera.capture(meanwhile: runQueuedPreviews)
            for earlier in exposure.earlier { storeButtonShot(earlier, from: camera) }
            var fresh: [GPhotoCamera.AddedFile] = [], reannounced: Set<CardPath> = []
            for added in exposure.files {
                // The same name, size and second as a file an earlier capture downloaded and
                // that is still on the card: a late second announcement of that file, or a new
                // exposure the camera named alike (two same-sized shots within a second, a
                // burst of uncompressed RAWs). Which one cannot be told, so the earlier
                // file's delete runs first: then a download finds only the new exposure, or
                // nothing (it was the earlier file again). Ignored unseen, a new exposure
                // was lost, and the next shot of that name fetched it (found under load).
                if card.classify(added) == .announcedAgain { reannounced.insert(added.path) }
                waitForDeleteOfEarlier(added)
                switch card.classify(added) {
                case .new: fresh.append(added)
                case .announcedAgain, .nameTakenByEarlier:
                    // Downloading would fetch the earlier file: keep everything on the card (a
                    // file that may be the earlier one announced again counts too: it may
                    // also be a new exposure of that name).
                    exposure.files.forEach { card.refused($0) }
                    return (.failed(WorkerFailure(ShutterError(.cameraFailure, CardLedger.reusedNameMessage(added.path),
                                                               fix: CardLedger.reusedNameFix))), [])
                }
            }
            if fresh.isEmpty { throw GPhotoFailure(code: GP_ERROR, operation: "capture", detail: "the camera announced no new file for this exposure") }
            for added in fresh {
                if card.wasDownloadedBefore(added.path) { camera.forgetCachedFiles() }
                let (file, descriptor): (WorkerFile, Int32)
                do {
                    (file, descriptor) = try download(added.path, from: camera)
                } catch where reannounced.contains(added.path) && error.code == GP_ERROR_FILE_NOT_FOUND {
                    WorkerLog.debug("\(added.path.name) announced again after its file was deleted: ignored")
                    continue
                }
                card.downloaded(added)
                files.append(file)
                descriptors.append(descriptor)
            }
            if files.isEmpty { throw GPhotoFailure(code: GP_ERROR, operation: "capture", detail: "the camera announced no new file for this exposure") }
            return (.captured(files, firedAt: fired, tookNanoseconds: WorkerProtocol.monotonicNanoseconds() - fired), descriptors)
        } catch {
            descriptors.forEach { _ = Glibc.close($0) }
            return (.failed(WorkerFailure(failed(error, while: "capture"))), [])
        }
    }

    /// How long a file whose name an earlier, downloaded one still holds waits for that
    /// one's delete (the backend asks once the earlier photo is stored).
    static let deleteOfEarlierPatience: Duration = .seconds(2)

    /// The earlier file of that name may be stored already, its delete queued behind this
    /// capture (which overtakes deletes), or about to be asked for: run it first.
    private func waitForDeleteOfEarlier(_ added: GPhotoCamera.AddedFile) {
        let deadline = ContinuousClock.now + Self.deleteOfEarlierPatience
        let held: (CardLedger.Verdict) -> Bool = { $0 == .nameTakenByEarlier || $0 == .announcedAgain }
        while held(card.classify(added)), card.heldOnlyByDownloaded(added.path) {
            runQueuedDeletes(added.path)
            guard held(card.classify(added)), ContinuousClock.now < deadline else { return }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    /// One live-view frame into an in-memory file the backend maps.
    private func preview() -> (WorkerReply, [Int32]) {
        guard let camera else {
            return (.failed(WorkerFailure(ShutterError(.notInPhotoMode, "live view: the camera is not open", fix: "send enter first"))), [])
        }
        do throws(GPhotoFailure) {
            let descriptor: Int32
            do { descriptor = try SharedBytes.create(named: "preview") } catch {
                throw GPhotoFailure(code: GP_ERROR_NO_MEMORY, operation: "live view", detail: "\(error)")
            }
            do {
                return (.frame(size: try camera.capturePreview(into: descriptor)), [descriptor])
            } catch {
                Glibc.close(descriptor)
                throw error
            }
        } catch where error.code == GP_ERROR_NOT_SUPPORTED {
            return (.noLiveView("\(camera.model) has no live view that libgphoto2 can reach (\(error))"), [])
        } catch {
            return (.failed(WorkerFailure(failed(error, while: "live view"))), [])
        }
    }

    /// Downloads a file announced while no capture was asked for (the camera's own button)
    /// and sends it at once; one that cannot be is logged and stays on the card.
    private func storeButtonShot(_ added: GPhotoCamera.AddedFile, from camera: GPhotoCamera) {
        switch card.classify(added) {
        case .announcedAgain:
            WorkerLog.debug("\(added.path.name) announced again: ignored")
        case .nameTakenByEarlier:
            card.refused(added)
            WorkerLog.warning("a shot from the camera's button: \(CardLedger.reusedNameMessage(added.path)) (fix: \(CardLedger.reusedNameFix))")
        case .new:
            do throws(GPhotoFailure) {
                if card.wasDownloadedBefore(added.path) { camera.forgetCachedFiles() }
                let (file, descriptor) = try download(added.path, from: camera)
                card.downloaded(added)
                send(.event(.cameraShot([file])), [descriptor])
                Glibc.close(descriptor)
            } catch {
                WorkerLog.warning("a shot from the camera's button could not be downloaded and stays on the card: \(error)")
            }
        }
    }

    /// Downloads one file into an in-memory file the backend maps, and checks it is as
    /// long as the camera announced: a transfer cut short is tried once more, and then
    /// fails the shot, which stays on the card (nothing deletes what was not stored).
    private func download(_ path: CardPath, from camera: GPhotoCamera) throws(GPhotoFailure) -> (WorkerFile, Int32) {
        let announced = camera.announcedSize(path)
        var sizes: [Int] = []
        for _ in 1...2 {
            let descriptor: Int32
            do { descriptor = try SharedBytes.create(named: path.name) } catch {
                throw GPhotoFailure(code: GP_ERROR_NO_MEMORY, operation: "downloading \(path.name)", detail: "\(error)")
            }
            let size: Int
            let progress = ProgressThrottle(file: path.name, total: announced.map(Int64.init)) { [send] message in send(message, []) }
            do { size = try camera.download(path, into: descriptor, progress: progress.report) } catch {
                Glibc.close(descriptor)
                throw error
            }
            progress.finish()
            if announced == nil || size == announced { return (WorkerFile(path: path, size: size), descriptor) }
            Glibc.close(descriptor)
            sizes.append(size)
            WorkerLog.warning("\(path.name): the camera sent \(size) of the \(announced ?? 0) bytes it announced\(sizes.count == 1 ? "; downloading it again" : "")")
        }
        throw GPhotoFailure(code: GP_ERROR_CORRUPTED_DATA, operation: "downloading \(path.name)",
                            detail: "the camera sent \(sizes.map(String.init).joined(separator: " and then ")) bytes of the \(announced ?? 0) it announced; the shot stays on the card")
    }

    /// Each event on its own: a shot goes out as soon as it is downloaded, and an event
    /// that fails costs only itself.
    private func pollButtonShots(_ camera: GPhotoCamera) {
        do throws(GPhotoFailure) {
            for _ in 0..<8 {
                guard let event = try camera.nextEventLoggingFailures() else { break }
                if case .fileAdded(let added) = event { storeButtonShot(added, from: camera) }
            }
        } catch {
            _ = failed(error, while: "waiting for camera events")
        }
    }

    private func delete(_ paths: [CardPath]) -> WorkerReply {
        guard let camera else {
            return .failed(WorkerFailure(ShutterError(.cameraFailure, "the camera is not connected; the shot stays on the card")))
        }
        do throws(GPhotoFailure) {
            for path in paths {
                try camera.delete(path)
                card.deleted(path)
            }
            return .done
        } catch {
            return .failed(WorkerFailure(ShutterError(.cameraFailure, "could not delete the shot from the card: \(error)")))
        }
    }

    /// Turns a failure into the answer's cause; a lost connection starts reconnecting.
    func failed(_ failure: GPhotoFailure, while action: String) -> ShutterError {
        let text = "\(failure)"
        // libgphoto2 reports a full card as GP_ERROR_NO_SPACE, or on PTP as "Out of memory
        // (Camera memorycard ran full during capture.)".
        if failure.detail?.contains("StoreRemoved") == true {
            return ShutterError(.storageUnavailable, "the camera's card was taken out during the \(action) (PTP StoreRemoved)", fix: "put a card in the camera")
        }
        if failure.detail?.contains("PTP StoreFull") == true {
            return ShutterError(.storageUnavailable, "the camera's card is full: it said so during the \(action) (PTP StoreFull) and took no photo",
                                fix: "free space or change the card")
        }
        if failure.code == GP_ERROR_NO_SPACE || text.localizedCaseInsensitiveContains("store full")
            || text.localizedCaseInsensitiveContains("ran full") {
            return ShutterError(.storageUnavailable, "the camera's card is full (\(text))", fix: "free space or change the card")
        }
        if failure.code == GP_ERROR_CAMERA_BUSY {
            return ShutterError(.cameraFailure, "the camera is busy and refused \(action) (\(text))",
                                fix: "let the camera finish writing and leave its menus, then shoot again")
        }
        if failure.code == GP_ERROR_CANCEL {
            return ShutterError(.cameraFailure, "\(action) failed: \(text)", fix: "check the camera's screen for why, then shoot again")
        }
        let lost = failure.lostConnection || !(camera?.responds() ?? false)
        guard lost else { return ShutterError(.cameraFailure, "\(action) failed: \(text)") }
        close()
        reconnection.lost()
        send(.event(.lost(text)), [])
        return ShutterError(.cameraFailure, "the camera went away during \(action): \(text)",
                            fix: "check the cable and that the camera is awake; shutterpipe reconnects when it is back")
    }
}

/// Download reports for the backend, a few a second: one per data packet would be
/// thousands of messages for a RAW file.
final class ProgressThrottle {
    static let interval: Duration = .milliseconds(100)
    private let file: String
    private let total: Int64?
    private let send: (WorkerMessage) -> Void
    private var last: ContinuousClock.Instant?
    private var bytes: Int64 = 0

    init(file: String, total: Int64?, send: @escaping (WorkerMessage) -> Void) {
        self.file = file
        self.total = total
        self.send = send
    }

    /// The bytes so far; the first report goes at once, later ones at most every
    /// ``interval``.
    func report(_ bytes: Int64) {
        self.bytes = bytes
        let now = ContinuousClock.now
        if let last, now - last < Self.interval { return }
        last = now
        send(.event(.progress(file: file, bytes: bytes, total: total)))
    }

    /// The last count, once the download is over.
    func finish() {
        send(.event(.progress(file: file, bytes: bytes, total: total)))
    }
}
