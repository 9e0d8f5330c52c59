import CGPhoto2
import Foundation
import GPhoto2Backend
import ShutterPipeKit
import ShutterPipeSupport

/// Capture and download, live-view frames, and the shots taken with the camera's button.
extension CameraSession {
    /// How long a fresh worker's first capture waits for the camera to be opened.
    static let freshWorkerPatience: Duration = .seconds(3)

    func capture() -> (WorkerReply, [Int32]) {
        defer { lastCaptureEnded = .now }
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
            let exposure = try camera.capture(meanwhile: runQueuedDuringExposure)
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
    func waitForDeleteOfEarlier(_ added: GPhotoCamera.AddedFile) {
        let deadline = ContinuousClock.now + Self.deleteOfEarlierPatience
        let held: (CardLedger.Verdict) -> Bool = { $0 == .nameTakenByEarlier || $0 == .announcedAgain }
        while held(card.classify(added)), card.heldOnlyByDownloaded(added.path) {
            runQueuedDeletes(added.path)
            deleteNow(added.path)
            guard held(card.classify(added)), ContinuousClock.now < deadline else { return }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    /// One live-view frame into an in-memory file the backend maps.
    func preview() -> (WorkerReply, [Int32]) {
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
    func storeButtonShot(_ added: GPhotoCamera.AddedFile, from camera: GPhotoCamera) {
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
    func download(_ path: CardPath, from camera: GPhotoCamera) throws(GPhotoFailure) -> (WorkerFile, Int32) {
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
    func pollButtonShots(_ camera: GPhotoCamera) {
        do throws(GPhotoFailure) {
            for _ in 0..<8 {
                guard let event = try camera.nextEventLoggingFailures() else { break }
                if case .fileAdded(let added) = event { storeButtonShot(added, from: camera) }
            }
        } catch {
            _ = failed(error, while: "waiting for camera events")
        }
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
