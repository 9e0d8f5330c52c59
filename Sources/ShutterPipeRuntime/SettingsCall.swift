import ShutterPipeKit
import ShutterPipeSupport

/// One settings request put to the backend, once its turn has come (the coordinator's
/// rule 15): under the deadline, with a refusal's settings kept for the answer.
enum SettingsCall {
    static func run(_ request: SettingsRequest, on control: any CameraSettingsControl, timeout: Duration) async -> SettingsAnswer {
        let camera = request.camera
        do {
            switch request.action {
            case .read(let keys):
                let read = try await withDeadline(timeout, "reading camera settings") {
                    try await control.settings(keys, camera: camera)
                }
                return SettingsAnswer(request: request, settings: read)
            case .change(let changes):
                let applied = try await withDeadline(timeout, "changing camera settings") {
                    try await control.apply(changes, camera: camera)
                }
                return SettingsAnswer(request: request, settings: applied)
            @unknown default:
                return SettingsAnswer(request: request, failure: ShutterError(.invalidConfiguration, "this shutterpipe does not know the settings request \(request.action): it is newer than its contract",
                                                                              fix: "update shutterpipe, or send get or set"))
            }
        } catch let refusal as SettingsRefusal {
            return SettingsAnswer(request: request, settings: refusal.settings, failure: refusal.error)
        } catch {
            return SettingsAnswer(request: request, failure: ShutterError.wrapping(error, as: .cameraFailure))
        }
    }
}
