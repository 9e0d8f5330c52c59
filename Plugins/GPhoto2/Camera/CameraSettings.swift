import Foundation
import GPhoto2Backend
import ShutterPipeKit

/// Applying a batch of setting changes to one camera, all or none (the values are
/// matched by ``SettingValues``).
enum CameraSettings {
    /// Applies `changes` to `camera`, all or none: every change is resolved and checked
    /// against the camera's own choices first, and one that cannot be made refuses the
    /// whole batch (``SettingsRefusal``, every problem named, the settings concerned as
    /// they are). Then each is set and read back. `fix` is the refusal's advice.
    static func apply(_ changes: [SettingChange], to camera: GPhotoCamera, fix: String) throws(ApplyFailure) -> [CameraSetting] {
        var resolved: [(change: SettingChange, setting: CameraSetting, target: SettingValues.WidgetValue)] = []
        var found: [SettingChange: CameraSetting] = [:]
        for change in changes {
            do throws(GPhotoFailure) { found[change] = try camera.setting(named: change.key) } catch { throw .camera(error) }
        }
        switch SettingValues.check(changes, against: found, model: camera.model, fix: fix) {
        case .success(let targets): resolved = zip(changes, targets).map { ($0, found[$0]!, $1) }
        case .failure(let refusal): throw .refused(refusal)
        }
        var applied: [CameraSetting] = []
        for (index, item) in resolved.enumerated() {
            do throws(GPhotoFailure) {
                try camera.set(item.setting.key, to: item.target)
                if SettingRoles.isAction(item.setting) {
                    // An action reads back a placeholder, or nothing: answer what was sent.
                    var sent = item.setting
                    sent.value = item.change.value
                    applied.append(sent)
                } else {
                    applied.append(try camera.setting(named: item.setting.key) ?? item.setting)
                }
            } catch {
                let done = resolved[..<index].map { "\($0.setting.key)" }
                throw .camera(GPhotoFailure(code: error.code, operation: "setting '\(item.setting.key)' to '\(item.change.value)'",
                                            detail: [error.detail, done.isEmpty ? nil : "already set: \(done.joined(separator: ", "))"]
                                                .compactMap { $0 }.joined(separator: "; ")))
            }
        }
        return applied
    }

    /// What the log says of a change: `iso set to 400`, `shutterspeed set to 0.0040s (asked:
    /// 1/250)` where the camera words it otherwise, `opcode sent: …` for an action.
    static func logText(_ change: SettingChange, _ setting: CameraSetting) -> String {
        if SettingRoles.isAction(setting) { return "\(setting.key) sent: \(change.value) (an action: done once, not kept)" }
        let asked = change.value.caseInsensitiveCompare(setting.value) == .orderedSame ? "" : " (asked: \(change.value))"
        return "\(setting.key) set to \(setting.value)\(asked)"
    }

    /// Why ``apply(_:to:fix:)`` changed nothing, or stopped.
    enum ApplyFailure: Error {
        /// Refused before anything was changed.
        case refused(SettingsRefusal)
        /// The camera failed a call.
        case camera(GPhotoFailure)
    }
}
