#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// The workers: each camera's worker connected (its button shots, frames and outages heard),
/// and what a camera's restart sends first.
extension GPhoto2Backend {
    func openRequest(_ selection: CameraSelection, keepTrying: Bool) -> WorkerRequest {
        let (changed, awaiting) = state.withLock { ($0.sessionSettings[selection.name] ?? [], $0.awaitingStore[selection.name] ?? []) }
        var selection = selection
        selection.awaitingStore = awaiting.sorted { $0.description < $1.description }
        return .open(selection.withSessionSettings(changed), pollMilliseconds: Int(options.eventPollInterval.milliseconds),
              reconnectLimitMilliseconds: Int(options.reconnectBackoffLimit.milliseconds), keepTrying: keepTrying)
    }

    /// The serial of the body opened as `name`, once it was opened (`{serial}`).
    func serial(of name: String) -> String? {
        state.withLock { $0.identities[name]?.serial }
    }

    func opened(_ identity: CameraIdentity, as name: String) {
        state.withLock { $0.identities[name] = identity }
        log.info("opened \(identity.model) at \(identity.port)\(identity.serial.map { ", serial \($0)" } ?? "")\(isRig ? " as '\(name)'" : "")",
                 [("camera", name)])
    }

    /// After a worker was restarted: opens its camera again if photo mode is on, as the
    /// first request the new worker gets; if the camera is not there yet, the worker keeps
    /// trying by itself.
    func reopen(_ selection: CameraSelection) -> CameraWorker.FirstRequest? {
        guard state.withLock({ $0.inPhotoMode }), let worker = workers.first(where: { $0.name == selection.name }) else { return nil }
        return CameraWorker.FirstRequest(request: openRequest(selection, keepTrying: true)) { [weak self] id in
            Task {
                guard let (reply, descriptors, _) = try? await worker.reply(to: id) else { return }
                descriptors.forEach { _ = close($0) }
                if case .opened(let identity) = reply { self?.opened(identity, as: selection.name) }
            }
        }
    }

    func handle(_ event: WorkerEvent, _ descriptors: [Int32], from camera: String) {
        defer { descriptors.forEach { _ = close($0) } }
        switch event {
        case .cameraShot(let shot), .importedShot(let shot):
            guard let context = state.withLock({ $0.context }) else { return }
            let files = zip(shot, descriptors).compactMap { file, descriptor -> CapturedFile? in
                do {
                    var captured = CapturedFile(name: file.path.name, data: try SharedBytes.map(descriptor), camera: isRig ? camera : nil,
                                                cameraPath: file.path.description, cameraSerial: serial(of: camera))
                    captured.previewFollows = file.previewFollows ?? false
                    return captured
                } catch {
                    // Never recorded as awaiting its store, so never deleted: the card keeps it.
                    log.warning("could not take \(file.path.name) from the camera worker: \(error); it stays on the camera's card",
                                [("camera", camera)])
                    return nil
                }
            }
            guard !files.isEmpty else { return }
            state.withLock { $0.awaitingStore[camera, default: []].formUnion(shot.map(\.path)) }
            if case .importedShot = event {
                log.info("imported from the card (taken while the camera was away): \(files.map(\.name).joined(separator: ", "))",
                         [("event", "cardImport"), ("camera", camera)])
            } else {
                log.info("shot taken on the camera: \(files.map(\.name).joined(separator: ", "))", [("camera", camera)])
            }
            let model = state.withLock { $0.identities[camera]?.model } ?? camera
            var photo = CapturedPhoto(files: files, camera: isRig ? camera : model)
            if case .importedShot = event {
                // Taken while away: marked as imported, with the time the card gives it.
                photo.origin = "card import"
                if let modified = shot.compactMap(\.modified).first { photo.captureTime = Date(timeIntervalSince1970: Double(modified)) }
            }
            context.deliver(photo)
        case .lost(let reason):
            state.withLock { $0.statuses = nil }
            log.warning("camera connection lost\(isRig ? " ('\(camera)')" : ""); reconnecting", [("event", "cameraLost"), ("camera", camera), ("reason", reason)])
        case .recovered(let identity, let outage):
            state.withLock { $0.identities[camera] = identity; $0.statuses = nil }
            log.info("camera \(identity.model) back at \(identity.port) after \(formatDuration(.milliseconds(Int64(outage))))",
                     [("event", "cameraRecovered"), ("camera", camera), ("outageMs", String(format: "%.0f", outage))])
        case .settingsDropped(let keys):
            state.withLock { state in
                state.sessionSettings[camera]?.removeAll { kept in keys.contains { SettingNames.key($0, names: kept.key) } }
            }
        case .log(let level, let message):
            log.log(LogLevel(rawValue: level) ?? .info, message, [("camera", camera), ("source", "worker")])
        case .progress(let file, let bytes, let total):
            state.withLock { $0.context }?.report(DownloadProgress(file: file, camera: isRig ? camera : nil, bytes: bytes, total: total))
        case .thumbnail(let file), .preview(let file):
            // A worker's file like a photo's: sealed before it is mapped, and no larger
            // than a display takes.
            guard let descriptor = descriptors.first, let context = state.withLock({ $0.context }) else { return }
            guard let jpeg = try? SharedBytes.map(descriptor), jpeg.count <= EarlyPreview.largest else {
                return log.debug("\(file): a picture from the camera worker not shown (not a sealed in-memory file of at most \(EarlyPreview.largest) bytes)", [("camera", camera)])
            }
            let source = if case .preview = event { "preview" } else { "camera thumbnail" }
            log.debug("\(file): \(source) from the camera worker, \(jpeg.count) bytes, before the photo is stored", [("camera", camera)])
            context.show(EarlyPreview(file: file, camera: isRig ? camera : nil, jpeg: Data(jpeg), source: source))
        }
    }
}
