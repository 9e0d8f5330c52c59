#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeSupport
import GPhoto2Backend

/// Card catch-up (`importOnConnect`): at every open, the files on the card that this
/// body never delivered (taken while the cable was out, or while shutterpipe was not
/// running) are imported through the normal path, an exposure at a time, between
/// requests: a capture asked for meanwhile goes first.
extension CameraSession {
    /// The record of what this body delivered, in the camera's settings folder.
    func deliveredLedger(for camera: GPhotoCamera) -> DeliveredLedger {
        let body = identity?.serial ?? camera.serialNumber() ?? "\(camera.model)-\(camera.port)"
        if let ledger = delivered, ledger.body == body { return ledger }
        let ledger = DeliveredLedger(folder: ProcessInfo.processInfo.environment["HOME"] ?? ".", body: body)
        delivered = ledger
        return ledger
    }

    /// The session stored these files' shot: recorded, so no catch-up imports them.
    func recordDelivered(_ paths: [CardPath]) -> WorkerReply {
        guard let camera else {
            // Away: what this worker downloaded says what they were.
            let files = paths.compactMap { card.file(at: $0) }
            if var ledger = delivered, !files.isEmpty { ledger.add(files); delivered = ledger }
            WorkerLog.debug("delivered, recorded while the camera is away in \(delivered?.path ?? "no record yet"): \(files.map(DeliveredLedger.key))")
            return .done
        }
        var ledger = deliveredLedger(for: camera)
        let files = paths.map { path in
            // As this worker met it (whether its time is the camera's), else as the camera
            // lists it now; libgphoto2's time for a file a capture brought is the computer's.
            if var met = card.file(at: path) {
                if met.size == nil { met.size = camera.info(path)?.size }
                return met
            }
            // Not met here: known by folder, name and size, whatever time libgphoto2 says.
            return GPhotoCamera.AddedFile(path: path, size: camera.info(path)?.size, modified: nil, timeIsCameras: false)
        }
        if !ledger.add(files) { WorkerLog.warning("cannot record delivered card files in '\(ledger.path)': a later catch-up may import them again") }
        WorkerLog.debug("delivered, recorded in \(ledger.path): \(files.map(DeliveredLedger.key))")
        delivered = ledger
        return .done
    }

    /// At an open, the first time this body is met (no record yet, `importOnConnect: new`):
    /// what its card holds now was there before shutterpipe and is recorded as such, as
    /// part of the open, before any shot. A later listing could not tell those files from
    /// shots taken while the cable was out or with the button meanwhile.
    func meetIfFirstTime(_ camera: GPhotoCamera) {
        guard let selection, selection.importOnConnect == "new" else { return }
        var ledger = deliveredLedger(for: camera)
        guard !ledger.existed, !ledger.unreadable else { return }
        do {
            var hidden: [CardPath] = []
            defer { sayHidden(hidden) }
            guard let files = try camera.allFiles(hidden: &hidden) else { return }
            recordFirstMeeting(files, in: &ledger)
        } catch {
            WorkerLog.warning("the card of a camera met for the first time could not be listed (\(error)): the files on it at the next listing will be taken as already there, not imported")
        }
    }

    private func recordFirstMeeting(_ files: [GPhotoCamera.AddedFile], in ledger: inout DeliveredLedger) {
        if !ledger.add(files) { WorkerLog.warning("cannot write '\(ledger.path)': the files on the card now may be imported at the next open") }
        delivered = ledger
        if !files.isEmpty {
            WorkerLog.info("\(files.count) file(s) already on the card when shutterpipe first met this camera stay there (importOnConnect: new; 'all' imports them)")
        }
    }

    /// A second object under a name the card already holds (a shot given a kept one's
    /// name) is listed, fetched and deleted by nobody: libgphoto2 reaches only the first.
    /// Said as a warning with the fix, once per name, never a line at debug level only.
    func sayHidden(_ paths: [CardPath]) {
        for path in paths where hiddenSaid.insert(path).inserted {
            WorkerLog.warning(CardLedger.hiddenByNameMessage(path) + " (fix: \(CardLedger.reusedNameFix))")
        }
    }

    /// Whether this enter's captures, button shots or imports named the file (its size
    /// the same where both are known).
    private func handledThisEnter(_ file: GPhotoCamera.AddedFile) -> Bool {
        guard let handled = handledSinceEnter[file.path] else { return false }
        return handled.size == nil || file.size == nil || handled.size == file.size
    }

    /// Imports what the card holds that this body never delivered; called between requests.
    func catchUp(_ camera: GPhotoCamera) {
        catchUpDue = false
        guard let selection, selection.importOnConnect != "none" else { return }
        var ledger = deliveredLedger(for: camera)
        guard !ledger.unreadable else {
            return WorkerLog.warning("cannot read '\(ledger.path)', the record of the files this camera delivered: no catch-up of its card (fix the file's owner or mode; delete it to start afresh)")
        }
        let files: [GPhotoCamera.AddedFile]
        do {
            // A request waiting (a capture) goes first; the catch-up starts again at the next pause.
            var hidden: [CardPath] = []
            defer { sayHidden(hidden) }
            guard let listed = try camera.allFiles(interrupted: requestsWaiting, hidden: &hidden) else { catchUpDue = true; return }
            files = listed
        } catch {
            return WorkerLog.warning("the card could not be listed for shots taken while the camera was away: \(error)")
        }
        if !ledger.existed && selection.importOnConnect == "new" {
            // The first meeting's listing failed at the open: made now, at the first chance.
            return recordFirstMeeting(files, in: &ledger)
        }
        // Held by the session, or stored and waiting to be deleted: not "never delivered".
        let held = Set(selection.awaitingStore).union(pendingDeletes.entries(for: identity?.serial).map(\.path))
        let missing = files.filter { !ledger.contains($0) && card.classify($0) == .new && !held.contains($0.path) && !handledThisEnter($0) }
        guard !missing.isEmpty else {
            return WorkerLog.debug("card catch-up: the \(files.count) file(s) on the card were all delivered or are in hand")
        }
        WorkerLog.info("\(missing.count) file(s) on the card were never delivered (taken while the camera was away): importing them")
        // One exposure at a time: its RAW and JPEG share a folder and a stem.
        let exposures = Dictionary(grouping: missing) { "\($0.path.folder)/\(PathName.deletingExtension($0.path.name))" }.sorted { $0.key < $1.key }
        for (_, exposure) in exposures {
            if requestsWaiting() { catchUpDue = true; return }  // a capture first; the rest at the next pause
            var files: [WorkerFile] = [], descriptors: [Int32] = []
            for added in exposure {
                do throws(GPhotoFailure) {
                    var (file, descriptor) = try download(added.path, from: camera)
                    card.downloaded(Self.described(added, downloaded: file))
                    handledSinceEnter[added.path] = added
                    file.modified = added.modified
                    files.append(file)
                    descriptors.append(descriptor)
                } catch {
                    WorkerLog.warning("\(added.path.name) could not be imported and stays on the card: \(error)")
                }
            }
            guard !files.isEmpty else { continue }
            send(.event(.importedShot(files)), descriptors)
            descriptors.forEach { Glibc.close($0) }
        }
    }
}
