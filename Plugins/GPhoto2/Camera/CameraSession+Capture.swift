import CGPhoto2
import Foundation
import GPhoto2Backend
import ShutterPipeKit
import ShutterPipeSupport

/// Capture and download, live-view frames, and the shots taken with the camera's button.
extension CameraSession {
    /// How long a fresh worker's first capture waits for the camera to be opened.
    static let freshWorkerPatience: Duration = .seconds(3)

    /// Takes one exposure and downloads its files; with `bulb`, held open that long.
    func capture(bulb: Duration? = nil) -> (WorkerReply, [Int32]) {
        defer { lastCaptureEnded = .now }
        cadence.began(at: .now)
        StreamPreview.captureBegins()
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
            // A camera that gives every exposure the same name: the stored shot still under
            // it is deleted before the camera is fired again.
            if card.reusesNames { clearReusedNamesBeforeFiring() }
            var held: (controls: [String], exposure: Duration)?
            if let bulb {
                let controls = try camera.bulbControls()
                guard !controls.isEmpty else {
                    return (.failed(WorkerFailure(ShutterError(.invalidConfiguration, "this camera has no bulb control libgphoto2 can drive: no 'bulb' setting, and no PTP open capture",
                                                               fix: GPhotoCamera.bulbFix))), [])
                }
                held = (controls, bulb)
            }
            let exposure = try camera.capture(bulb: held, meanwhile: runQueuedDuringExposure)
            // This enter's own shots, stored or failed: never a catch-up's to import.
            for added in exposure.files + exposure.earlier { handledSinceEnter[added.path] = added }
            for earlier in exposure.earlier { storeButtonShot(earlier, from: camera) }
            var fresh: [GPhotoCamera.AddedFile] = []
            for added in exposure.files {
                if card.wasDownloadedBefore(added.path) || card.file(at: added.path) != nil { card.reusesNames = true }
                switch card.classify(added) {
                case .new:
                    fresh.append(added)
                case .nameTakenByEarlier:
                    // Another object under the name of a stored shot still on the card (its
                    // size or time differ, so libgphoto2 has the new object's info): the
                    // earlier one's delete runs first (by name, libgphoto2 takes the oldest).
                    waitForDeleteOfEarlier(added)
                    guard card.classify(added) == .new else { return refuse(exposure, CardLedger.reusedNameMessage(added.path)) }
                    fresh.append(added)
                case .announcedAgain:
                    // The same name, size and second as a stored shot still on the card: that
                    // shot announced again, or a new exposure in the same object (a camera
                    // that reuses its in-memory object, for which libgphoto2 keeps the old
                    // info). Deleting by name would delete the new exposure in the second
                    // case, and fetching could get the old one: both stay on the card. The
                    // camera now counts as reusing names, so this does not happen again.
                    return refuse(exposure, CardLedger.announcedAgainMessage(added.path))
                }
            }
            if fresh.isEmpty {
                // CaptureComplete and no file after it (GPhotoCamera.firstFileWait).
                return (.failed(WorkerFailure(ShutterError(.cameraFailure, "the camera finished the capture without a file: it said CaptureComplete and announced none",
                                                           fix: "look at the camera: a shot it could not take (focus not found, a full buffer) shows on its screen; then shoot again"))), [])
            }
            for added in fresh {
                if card.wasDownloadedBefore(added.path) { camera.forgetCachedFiles() }
                let (file, descriptor) = try download(added.path, from: camera)
                card.downloaded(Self.described(added, downloaded: file))
                files.append(file)
                descriptors.append(descriptor)
            }
            return (.captured(files, firedAt: fired, tookNanoseconds: WorkerProtocol.monotonicNanoseconds() - fired), descriptors)
        } catch {
            descriptors.forEach { _ = Glibc.close($0) }
            return (.failed(WorkerFailure(failed(error, while: "capture"))), [])
        }
    }

    /// A downloaded file as the ledger keeps it: the size and time the camera announced,
    /// or, where its event gave no size, the size downloaded (a time read after the
    /// download would be libgphoto2's, not the camera's). A delete done by a later worker
    /// checks them.
    static func described(_ added: GPhotoCamera.AddedFile, downloaded file: WorkerFile) -> GPhotoCamera.AddedFile {
        var described = added
        described.size = added.size ?? file.size
        return described
    }

    /// A shot whose files cannot be told from earlier ones still on the card: every file
    /// stays there, and the answer says why and what to change.
    private func refuse(_ exposure: GPhotoCamera.Exposure, _ message: String) -> (WorkerReply, [Int32]) {
        exposure.files.forEach { card.refused($0) }
        return (.failed(WorkerFailure(ShutterError(.cameraFailure, message, fix: CardLedger.reusedNameFix))), [])
    }

    /// Before a camera that reuses names is fired: each stored shot still on its card is
    /// deleted, its delete waited for (up to ``deleteOfEarlierPatience``) while the shot is
    /// still being stored. A session that never deletes (`keepOnCamera`) does not wait.
    private func clearReusedNamesBeforeFiring() {
        for path in card.onCardPaths {
            let deadline = ContinuousClock.now + Self.deleteOfEarlierPatience
            while card.file(at: path) != nil {
                runQueuedDeletes(path)
                deleteNow(path)
                guard card.file(at: path) != nil, deletesExpected, camera != nil, ContinuousClock.now < deadline else { break }
                Thread.sleep(forTimeInterval: 0.02)
            }
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
            // A session that never deletes (keepOnCamera) is not waited for.
            guard held(card.classify(added)), deletesExpected, ContinuousClock.now < deadline else { return }
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
        handledSinceEnter[added.path] = added
        switch card.classify(added) {
        case .announcedAgain:
            // A shot of this name, size and time is stored and still on the card: this is it
            // announced again, or a new shot that cannot be told from it. Not fetched (it
            // could be the stored one's bytes); said, with the fix, never silently dropped.
            WorkerLog.warning("a shot from the camera's button: \(CardLedger.announcedAgainMessage(added.path)) (fix: \(CardLedger.reusedNameFix))")
        case .nameTakenByEarlier:
            // Another object under a stored shot's name: that one's delete first, as for a
            // capture; while it stays on the card, so does this one.
            card.reusesNames = true
            waitForDeleteOfEarlier(added)
            guard card.classify(added) == .new else {
                card.refused(added)
                return WorkerLog.warning("a shot from the camera's button: \(CardLedger.reusedNameMessage(added.path)) (fix: \(CardLedger.reusedNameFix))")
            }
            downloadButtonShot(added, from: camera)
        case .new:
            downloadButtonShot(added, from: camera)
        }
    }

    private func downloadButtonShot(_ added: GPhotoCamera.AddedFile, from camera: GPhotoCamera) {
        do throws(GPhotoFailure) {
            if card.wasDownloadedBefore(added.path) { camera.forgetCachedFiles() }
            let (file, descriptor) = try download(added.path, from: camera)
            card.downloaded(Self.described(added, downloaded: file))
            send(.event(.cameraShot([file])), [descriptor])
            Glibc.close(descriptor)
        } catch {
            WorkerLog.warning("a shot from the camera's button could not be downloaded and stays on the card: \(error)")
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
            let size: Int, previewFollows: Bool
            let progress = ProgressThrottle(file: path.name, total: announced.map(Int64.init)) { [send] message in send(message, []) }
            // The thumbnail at the file's front goes out as soon as it is in: the page
            // paints it while the rest is still coming. Only for the first try: a second
            // brings the same picture.
            let thumbnail: ((Data) -> Void)? = sizes.isEmpty ? { [send] jpeg in Self.sendThumbnail(jpeg, of: path, send) } : nil
            let preview: (@Sendable (Data) -> Void)? = sizes.isEmpty ? { @Sendable [send] jpeg in CameraSession.sendThumbnail(jpeg, of: path, source: "preview", send) } : nil
            let started = ContinuousClock.now
            do { (size, previewFollows) = try camera.download(path, into: descriptor, progress: progress.report, thumbnail: thumbnail, preview: preview, expected: announced) } catch {
                Glibc.close(descriptor)
                throw error
            }
            progress.finish()
            WorkerLog.debug("\(path.name): \(size) bytes downloaded in \(Int(started.duration(to: .now).milliseconds.rounded())) ms")
            if announced == nil || size == announced { return (WorkerFile(path: path, size: size, previewFollows: previewFollows), descriptor) }
            Glibc.close(descriptor)
            sizes.append(size)
            WorkerLog.warning("\(path.name): the camera sent \(size) of the \(announced ?? 0) bytes it announced\(sizes.count == 1 ? "; downloading it again" : "")")
        }
        throw GPhotoFailure(code: GP_ERROR_CORRUPTED_DATA, operation: "downloading \(path.name)",
                            detail: "the camera sent \(sizes.map(String.init).joined(separator: " and then ")) bytes of the \(announced ?? 0) it announced; the shot stays on the card")
    }

    /// Sends a file's thumbnail, or its preview decoded as it downloaded, in an in-memory
    /// file of its own (a JPEG of up to 512 KiB does not fit a message); one that cannot be
    /// made is simply not shown.
    static func sendThumbnail(_ jpeg: Data, of path: CardPath, source: String = "camera thumbnail", _ send: @Sendable (WorkerMessage, [Int32]) -> Void) {
        let descriptor: Int32
        do { descriptor = try SharedBytes.create(named: "\(path.name) \(source)") } catch {
            return WorkerLog.debug("\(path.name): its \(source) not sent (no in-memory file: \(error))")
        }
        defer { Glibc.close(descriptor) }
        do { try DescriptorIO.writeAll(jpeg, to: descriptor) } catch {
            return WorkerLog.debug("\(path.name): its \(source) not sent (\(error))")
        }
        send(.event(source == "camera thumbnail" ? .thumbnail(file: path.name) : .preview(file: path.name)), [descriptor])
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
