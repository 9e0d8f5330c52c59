#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// Camera settings during a session: read and changed through each camera's worker,
/// between captures (the coordinator's rule 15).
extension GPhoto2Backend: CameraSettingsControl {
    /// Every camera's settings (or `camera`'s), each camera asked before any is awaited.
    public func settings(_ keys: [String], camera: String?) async throws -> [CameraSetting] {
        let chosen = try workers(for: camera)
        var found: [CameraSetting] = []
        var refusals: [(String, SettingsRefusal)] = []
        var failures: [(String, ShutterError)] = []
        for (worker, reply) in await ask(chosen, .readSettings(keys)) {
            switch reply {
            case .success(.settings(let settings)): found += tagged(settings, by: worker)
            case .success(.refused(let failure, let settings)): refusals.append((worker.name, SettingsRefusal(failure.error, settings: tagged(settings, by: worker))))
            case .success(let other): failures.append((worker.name, ShutterError(.cameraFailure, "unexpected answer to a settings read: \(other)")))
            case .failure(let error): failures.append((worker.name, error))
            }
        }
        try throwFirst(refusals, failures)
        return found
    }

    /// Applies the changes to every camera (or `camera`), all or none. With several
    /// cameras, every change is first checked against every camera's choices: one
    /// camera's refusal must not leave the others changed.
    public func apply(_ changes: [SettingChange], camera: String?) async throws -> [CameraSetting] {
        let chosen = try workers(for: camera)
        if chosen.count > 1 { try await check(changes, on: chosen) }
        var applied: [CameraSetting] = []
        var refusals: [(String, SettingsRefusal)] = []
        var failures: [(String, ShutterError)] = []
        for (worker, reply) in await ask(chosen, .applySettings(changes)) {
            switch reply {
            case .success(.settings(let settings)):
                // Kept for every later open of this camera (reconnection, restart, enter).
                state.withLock { state in
                    var kept = state.sessionSettings[worker.name] ?? []
                    kept.removeAll { old in settings.contains { $0.key == old.key } }
                    state.sessionSettings[worker.name] = kept + settings
                }
                applied += tagged(settings, by: worker)
            case .success(.refused(let failure, let settings)): refusals.append((worker.name, SettingsRefusal(failure.error, settings: tagged(settings, by: worker))))
            case .success(let other): failures.append((worker.name, ShutterError(.cameraFailure, "unexpected answer to a settings change: \(other)")))
            case .failure(let error): failures.append((worker.name, error))
            }
        }
        if !applied.isEmpty, !(refusals.isEmpty && failures.isEmpty) {
            // Only a camera that failed between the check and the change gets here.
            let changed = Set(applied.compactMap(\.camera)).sorted().joined(separator: ", ")
            log.warning("settings changed on \(changed) but not on every camera: \(failures.map { "\($0.0): \($0.1)" }.joined(separator: "; "))")
        }
        try throwFirst(refusals, failures)
        return applied
    }

    /// Reads what `changes` name on every camera and checks them there, before any camera
    /// changes anything.
    private func check(_ changes: [SettingChange], on chosen: [CameraWorker]) async throws {
        var refusals: [(String, SettingsRefusal)] = []
        var failures: [(String, ShutterError)] = []
        for (worker, reply) in await ask(chosen, .readSettings(changes.map(\.key))) {
            let model = state.withLock { $0.identities[worker.name]?.model } ?? worker.name
            switch reply {
            case .success(.settings(let settings)):
                // readSettings answers in the order of the keys asked.
                let found = Dictionary(zip(changes, settings), uniquingKeysWith: { first, _ in first })
                if case .failure(let refusal) = SettingValues.check(changes, against: found, model: model, fix: "pick one of the choices") {
                    refusals.append((worker.name, SettingsRefusal(refusal.error, settings: tagged(refusal.settings, by: worker))))
                }
            case .success(.refused(let failure, let settings)): refusals.append((worker.name, SettingsRefusal(failure.error, settings: tagged(settings, by: worker))))
            case .success(let other): failures.append((worker.name, ShutterError(.cameraFailure, "unexpected answer to a settings read: \(other)")))
            case .failure(let error): failures.append((worker.name, error))
            }
        }
        try throwFirst(refusals, failures)
    }

    /// The workers a request is for.
    private func workers(for camera: String?) throws -> [CameraWorker] {
        guard state.withLock({ $0.inPhotoMode }) else {
            throw ShutterError(.notInPhotoMode, "the camera is not open", fix: "send enter first")
        }
        guard let camera else { return workers }
        guard let worker = workers.first(where: { $0.name == camera }) else {
            throw SettingsRefusal(ShutterError(.invalidConfiguration, "no camera named '\(camera)' in this session; its cameras: \(workers.map(\.name).joined(separator: ", "))",
                                               fix: "name one of the session's cameras, or leave the camera out to change them all"))
        }
        return [worker]
    }

    /// Sends `request` to every worker before awaiting any answer.
    private func ask(_ chosen: [CameraWorker], _ request: WorkerRequest) async -> [(CameraWorker, Result<WorkerReply, ShutterError>)] {
        let sent = chosen.map { ($0, $0.send(request)) }
        var replies: [(CameraWorker, Result<WorkerReply, ShutterError>)] = []
        for (worker, id) in sent {
            do {
                let (reply, descriptors, _) = try await worker.reply(to: id)
                descriptors.forEach { _ = close($0) }
                if case .failed(let failure) = reply {
                    replies.append((worker, .failure(failure.error)))
                } else {
                    replies.append((worker, .success(reply)))
                }
            } catch {
                replies.append((worker, .failure(ShutterError.wrapping(error, as: .cameraFailure))))
            }
        }
        return replies
    }

    /// Each setting marked with its camera's name, when the backend drives several.
    private func tagged(_ settings: [CameraSetting], by worker: CameraWorker) -> [CameraSetting] {
        guard isRig else { return settings }
        return settings.map { setting in
            var setting = setting
            setting.camera = worker.name
            return setting
        }
    }

    /// A refusal (every camera's problems in one), else a failure, naming the cameras of a
    /// rig.
    private func throwFirst(_ refusals: [(String, SettingsRefusal)], _ failures: [(String, ShutterError)]) throws {
        if !refusals.isEmpty {
            guard isRig else { throw refusals[0].1 }
            let error = Self.combined(refusals.map { ($0.0, $0.1.error) }, rig: true)
            throw SettingsRefusal(error, settings: refusals.flatMap(\.1.settings))
        }
        if !failures.isEmpty { throw Self.combined(failures, rig: isRig) }
    }
}
