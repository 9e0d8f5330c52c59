import CGPhoto2
import Foundation
import GPhoto2Backend
import ShutterPipeKit

/// Deleting stored shots from the card: recorded at once, done when the camera is idle.
///
/// A delete costs the camera a round trip and its card a write (hundreds of milliseconds on
/// some bodies); run between the shots of a burst, it would hold each next capture. So a
/// delete request is only written into ``PendingDeletes`` and answered, and the deletes run
/// between requests once no capture has come for longer than the shoot's own pace
/// (``CaptureCadence``: twice the usual time between the last captures, 1 to 10 s), and
/// stop as soon as a request arrives; before the camera is closed; or at once when a new
/// file has the name of a stored one still on the card.
extension CameraSession {
    /// How long closing the camera may spend on the deletes still to do (well within the
    /// coordinator's default `exitTimeout`, 15 s); the rest wait for the next time the
    /// camera is open.
    static let deletesOnClose: Duration = .seconds(5)

    /// How far apart, in seconds, a stored shot's time and the one read again may be.
    static let timeSlack = 2

    /// A delete request: kept in the list, done when the camera is idle.
    func queueDeletes(_ paths: [CardPath]) -> WorkerReply {
        pendingDeletes.add(paths.map { path in
            let file = card.file(at: path)
            // The time only where it is the camera's: a new session reads the camera's again.
            return PendingDeletes.Entry(serial: identity?.serial, path: path, size: file?.size, modified: file?.cameraTime)
        })
        return .done
    }

    /// Whether the camera has been idle long enough for housekeeping.
    var isIdle: Bool { lastCaptureEnded.map { ContinuousClock.now - $0 >= cadence.grace } ?? true }

    /// Between requests: the deletes due, one at a time, while no request waits.
    func runDueDeletes() {
        guard camera != nil, isIdle else { return }
        for entry in pendingDeletes.entries(for: identity?.serial) {
            guard let camera, !requestsWaiting() else { return }
            runDelete(entry, on: camera)
        }
    }

    /// Does the deletes still to do for the file at `path` now (a new file has its name).
    func deleteNow(_ path: CardPath) {
        for entry in pendingDeletes.entries(for: identity?.serial) where entry.path == path {
            guard let camera else { return }
            runDelete(entry, on: camera)
        }
    }

    /// Before the camera is closed: the deletes still to do, within ``deletesOnClose``.
    func runDeletesBeforeClosing() {
        let deadline = ContinuousClock.now + Self.deletesOnClose
        for entry in pendingDeletes.entries(for: identity?.serial) {
            guard let camera, ContinuousClock.now < deadline else { break }
            runDelete(entry, on: camera)
        }
        let left = pendingDeletes.entries(for: identity?.serial).count
        if left > 0, camera != nil {
            WorkerLog.info("\(left) stored shot(s) still to delete from the card: kept for the next time the camera is open")
        }
    }

    /// One delete. A file this worker did not download as it is now (an entry left by an
    /// earlier worker) is checked first: it must be the one stored, same size and time,
    /// not a new file given the name since.
    private func runDelete(_ entry: PendingDeletes.Entry, on camera: GPhotoCamera) {
        let known = card.file(at: entry.path).map { $0.size == entry.size && $0.cameraTime == entry.modified } ?? false
        if !known {
            guard let info = camera.info(entry.path) else { return finished(entry) }  // gone already
            // The size must be the same; the time within a couple of seconds (libgphoto2
            // reads the camera's time again in a new session; a time the stored file lacked
            // is not held against it).
            let sameTime = entry.modified.map { stored in info.modified.map { abs($0 - stored) <= Self.timeSlack } ?? false } ?? true
            guard entry.size != nil, info.size == entry.size, sameTime else {
                WorkerLog.warning("\(entry.path.name) on the card is not the stored shot of that name (\(info.size.map(String.init) ?? "?") bytes, "
                    + "time \(info.modified.map(String.init) ?? "?"); stored: \(entry.size.map(String.init) ?? "?") bytes, time \(entry.modified.map(String.init) ?? "?")): not deleted")
                return finished(entry)
            }
        }
        do throws(GPhotoFailure) {
            try camera.delete(entry.path)
            finished(entry)
        } catch where error.code == GP_ERROR_FILE_NOT_FOUND {
            finished(entry)
        } catch where error.code == GP_ERROR_CAMERA_BUSY {
            WorkerLog.debug("\(entry.path.name): the camera is busy; deleted at the next pause")
        } catch {
            let cause = failed(error, while: "deleting \(entry.path.name) from the card")
            // Gone with the camera: it stays in the list for the next time it is open.
            guard self.camera != nil else { return }
            WorkerLog.warning("could not delete a stored shot from the card, it stays there: \(cause.message)")
            finished(entry)
        }
    }

    private func finished(_ entry: PendingDeletes.Entry) {
        card.deleted(entry.path)
        pendingDeletes.remove(entry)
    }
}
