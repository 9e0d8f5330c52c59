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
        let answers = await ask(try workers(for: camera), .readSettings(keys))
        try throwFirst(answers.refusals, answers.failures)
        return answers.settings.flatMap { worker, settings in tagged(settings, by: worker) }
    }

    /// Applies the changes to every camera (or `camera`), all or none. With several
    /// cameras, every change is first checked against every camera's choices: one
    /// camera's refusal must not leave the others changed.
    public func apply(_ changes: [SettingChange], camera: String?) async throws -> [CameraSetting] {
        let chosen = try workers(for: camera)
        if chosen.count > 1 { try await check(changes, on: chosen) }
        let answers = await ask(chosen, .applySettings(changes))
        for (worker, settings) in answers.settings {
            // Values (not actions) kept as asked for, for every later open of this camera
            // (reconnection, restart, enter).
            state.withLock { state in
                state.sessionSettings[worker.name] = SettingRoles.kept(state.sessionSettings[worker.name] ?? [], after: changes, applied: settings)
            }
        }
        let applied = answers.settings.flatMap { worker, settings in tagged(settings, by: worker) }
        if !applied.isEmpty, !(answers.refusals.isEmpty && answers.failures.isEmpty) {
            // Only a camera that failed between the check and the change gets here.
            let changed = answers.settings.map(\.0.name).joined(separator: ", ")
            log.warning("settings changed on \(changed) but not on every camera: \(answers.failures.map { "\($0.0): \($0.1)" }.joined(separator: "; "))")
        }
        try throwFirst(answers.refusals, answers.failures)
        return applied
    }

    /// Reads what `changes` name on every camera and checks them there, before any camera
    /// changes anything.
    private func check(_ changes: [SettingChange], on chosen: [CameraWorker]) async throws {
        let answers = await ask(chosen, .readSettings(changes.map(\.key)))
        var refusals = answers.refusals
        for (worker, settings) in answers.settings {
            let model = state.withLock { $0.identities[worker.name]?.model } ?? worker.name
            // readSettings answers in the order of the keys asked.
            let found = Dictionary(zip(changes, settings), uniquingKeysWith: { first, _ in first })
            if case .failure(let refusal) = SettingValues.check(changes, against: found, model: model, fix: "pick one of the choices") {
                refusals.append((worker.name, SettingsRefusal(refusal.error, settings: tagged(refusal.settings, by: worker))))
            }
        }
        try throwFirst(refusals, answers.failures)
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

    /// What the cameras asked answered, each camera's reply sorted once: its settings (as
    /// the worker gave them), its refusal (naming it in a rig), or its failure.
    private struct Answers {
        var settings: [(CameraWorker, [CameraSetting])] = []
        var refusals: [(String, SettingsRefusal)] = []
        var failures: [(String, ShutterError)] = []
    }

    /// Sends `request` to every worker before awaiting any answer.
    private func ask(_ chosen: [CameraWorker], _ request: WorkerRequest) async -> Answers {
        let sent = chosen.map { ($0, $0.send(request)) }
        var answers = Answers()
        for (worker, id) in sent {
            do {
                let (reply, descriptors, _) = try await worker.reply(to: id)
                descriptors.forEach { _ = close($0) }
                switch reply {
                case .settings(let settings): answers.settings.append((worker, settings))
                case .refused(let failure, let settings):
                    answers.refusals.append((worker.name, SettingsRefusal(failure.error, settings: tagged(settings, by: worker))))
                case .failed(let failure): answers.failures.append((worker.name, failure.error))
                default: answers.failures.append((worker.name, ShutterError(.cameraFailure, "unexpected answer to \(request): \(reply)")))
                }
            } catch {
                answers.failures.append((worker.name, ShutterError.wrapping(error, as: .cameraFailure)))
            }
        }
        return answers
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
