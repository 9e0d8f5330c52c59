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
    var camera: GPhotoCamera?
    private(set) var selection: CameraSelection?
    /// The values changed during the session, as asked for: every reopen applies them
    /// after the selection's (``CameraSelection/withSessionSettings(_:)``). Actions are
    /// never kept (``SettingRoles``).
    var sessionSettings: [SettingChange] = []
    var identity: CameraIdentity?
    let reconnection = Reconnection()
    /// The last reconnection failure logged: the next is logged when it says otherwise.
    private var lastReconnectFailure: String?
    /// The files this worker downloaded that are still on the card.
    var card = CardLedger()
    /// The card deletes asked for and not done yet, kept in the worker's folder (its HOME,
    /// the camera's own): done when the camera is idle (``runDueDeletes()``).
    let pendingDeletes = PendingDeletes(folder: ProcessInfo.processInfo.environment["HOME"])
    /// Whether stored shots are deleted from the card (not with `keepOnCamera`): only then
    /// is a delete worth waiting for.
    var deletesExpected: Bool { !(selection?.keepsShotsOnCard ?? false) }
    /// When the last capture ended: deletes and status reads wait for a pause.
    var lastCaptureEnded: ContinuousClock.Instant?
    /// The pace of the captures, which sets how long that pause is.
    var cadence = CaptureCadence()
    /// The last status read, answered again during a burst.
    var lastStatus: WorkerReply?
    /// Takes in the delete requests for a card file that are queued behind the request
    /// running now (they are then in ``pendingDeletes``).
    var runQueuedDeletes: (CardPath) -> Void = { _ in }
    /// Whether a request waits: housekeeping between requests stops for it.
    var requestsWaiting: () -> Bool = { false }
    /// Runs what is asked for while a capture waits for its exposure: live-view frames,
    /// and delete requests (only recorded: a crash during a long exposure loses none).
    var runQueuedDuringExposure: () -> Void = {}
    /// Whether this worker has had the camera open: a fresh one (started again after a
    /// crash) may find the camera still closing the dead worker's connection.
    var hadCamera = false
    /// What this body delivered (``DeliveredLedger``), once read.
    var delivered: DeliveredLedger?
    /// A catch-up of the card is due at the next pause (set at every open).
    var catchUpDue = false
    /// Names the card holds more than once that were said (once each per worker):
    /// libgphoto2 reaches only the first object of a name (``LibraryComplaints``).
    var hiddenSaid: Set<CardPath> = []
    /// The card files this worker's captures, button shots and imports named since the
    /// session's open (stored, failed, or with an outcome not yet heard of): the catch-up
    /// is for what came while the camera was away, not for these. Kept across
    /// reconnections (a shot's `delivered` may come after the camera is back); a failed
    /// one stays on the card until the next enter. By path, with the size it had: a card
    /// swapped meanwhile may hold another file under the name.
    var handledSinceEnter: [CardPath: GPhotoCamera.AddedFile] = [:]
    let started = ContinuousClock.now
    let send: @Sendable (WorkerMessage, [Int32]) -> Void

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
        case .bulb(let milliseconds):
            return capture(bulb: .milliseconds(milliseconds))
        case .delete(let paths):
            return (queueDeletes(paths), [])
        case .delivered(let paths):
            return (recordDelivered(paths), [])
        case .preview:
            return preview()
        case .status:
            guard let camera else { return (.status(battery: nil, freeCardBytes: nil, connected: false), []) }
            // During a burst the camera is not asked: the last reading does.
            if !isIdle, let lastStatus { return (lastStatus, []) }
            let status = WorkerReply.status(battery: (try? camera.setting(named: "batterylevel"))?.value, freeCardBytes: camera.freeBytes(), connected: true)
            lastStatus = status
            return (status, [])
        case .close:
            runDeletesBeforeClosing()
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
            if selection.syncsClock { WorkerLog.info(CameraClock.sync(opened.camera)) }
            meetIfFirstTime(opened.camera)
            catchUpDue = selection.importOnConnect != "none"
            handledSinceEnter = [:]
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
            if catchUpDue { catchUp(camera) }
            runDueDeletes()
        } else if selection != nil, reconnection.isDue() {
            reconnect()
        }
    }

    func reconnect() {
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
            if selection.syncsClock { WorkerLog.info(CameraClock.sync(opened.camera)) }
            meetIfFirstTime(opened.camera)
            catchUpDue = selection.importOnConnect != "none"
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
        if failure.operation == GPhotoCamera.openingBulb, !failure.lostConnection {
            return ShutterError(.invalidConfiguration, "this camera has no bulb control that works: \(failure.detail ?? text)", fix: GPhotoCamera.bulbFix)
        }
        if failure.operation == GPhotoCamera.closingBulb, !failure.lostConnection {
            return ShutterError(.cameraFailure, "the bulb exposure could not be closed: \(failure.detail ?? text)",
                                fix: "look at the camera: end the exposure on the body (switch it off and on) before the next shot")
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
