import Foundation
import GPhoto2Backend
import ShutterPipeKit

/// Reading and changing settings during a session, on the camera thread.
extension CameraSession {
    func readSettings(_ keys: [String]) -> WorkerReply {
        guard let camera else { return .failed(WorkerFailure(notOpen)) }
        do throws(GPhotoFailure) {
            if keys.isEmpty { return .settings(try camera.allSettings()) }
            var found: [CameraSetting] = []
            var unknown: [String] = []
            for key in keys {
                if let setting = try camera.setting(named: key) { found.append(setting) } else { unknown.append(key) }
            }
            guard unknown.isEmpty else {
                return .refused(WorkerFailure(ShutterError(.invalidConfiguration, "\(camera.model) has no setting \(unknown.map { "'\($0)'" }.joined(separator: ", "))",
                                                           fix: "`shutterpipe camera settings` lists the settings this camera has")), found)
            }
            return .settings(found)
        } catch {
            return .failed(WorkerFailure(failed(error, while: "reading settings")))
        }
    }

    func applySettings(_ changes: [SettingChange]) -> WorkerReply {
        guard let camera else { return .failed(WorkerFailure(notOpen)) }
        do {
            let applied = try CameraSettings.apply(changes, to: camera, fix: "pick one of the choices")
            sessionSettings = SettingRoles.kept(sessionSettings, after: changes, applied: applied)
            for (change, setting) in zip(changes, applied) { WorkerLog.info(CameraSettings.logText(change, setting)) }
            return .settings(applied)
        } catch {
            switch error {
            case .refused(let refusal): return .refused(WorkerFailure(refusal.error), refusal.settings)
            case .camera(let failure): return .failed(WorkerFailure(failed(failure, while: "changing settings")))
            }
        }
    }

    /// Why settings cannot be read or changed now: the camera is away (reconnecting), or
    /// not opened at all.
    var notOpen: ShutterError {
        if selection != nil {
            return ShutterError(.cameraFailure, "the camera is reconnecting (it went away); nothing changed",
                                fix: "check the cable and that the camera is awake, then try again once the log says it is back")
        }
        return ShutterError(.notInPhotoMode, "the camera is not open", fix: "send enter first")
    }
}
