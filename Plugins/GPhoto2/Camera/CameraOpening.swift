import CGPhoto2
import Foundation
import GPhoto2Backend
import ShutterPipeKit
import ShutterPipeSupport

/// Choosing the camera a selection names, opening it, the errors that give the fix, and
/// the settings applied on open.
enum CameraOpening {
    /// Opens the camera `selection` names; `known` is the camera opened before (a
    /// reconnection looks for the same one).
    static func open(_ selection: CameraSelection, known: CameraIdentity?) throws(ShutterError) -> GPhotoCamera {
        let candidates = try candidates(selection, known: known)
        var last: ShutterError?
        for (model, port) in candidates {
            let camera: GPhotoCamera
            do throws(GPhotoFailure) { camera = try GPhotoCamera(model: model, port: port) } catch {
                last = openError(error, model: model, port: port)
                continue
            }
            if let wanted = selection.serial ?? known?.serial, let serial = camera.serialNumber(), serial != wanted {
                camera.close()
                last = ShutterError(.noCamera, "the camera at \(port) has serial \(serial), not \(wanted)",
                                    fix: "connect the camera with serial \(wanted), or change 'serial'")
                continue
            }
            guard camera.canCapture() else {
                camera.close()
                throw ShutterError(.cameraFailure, "\(model) cannot capture through libgphoto2 (its driver has no remote capture)")
            }
            do throws(ShutterError) { try apply(selection.settings, to: camera) } catch {
                camera.close()
                throw error
            }
            return camera
        }
        throw last ?? ShutterError(.noCamera, "no camera found")
    }

    /// The cameras to try, in order: the port given, else every detected camera that
    /// matches (with a serial number, each is opened until one has it).
    static func candidates(_ options: CameraSelection, known: CameraIdentity?) throws(ShutterError) -> [(String, String)] {
        if let port = options.port ?? (known?.port.hasPrefix("ptpip:") == true ? known?.port : nil) {
            if port.hasPrefix("ptpip:") { return [(options.model ?? "PTP/IP Camera", port)] }
            if let model = options.model ?? known?.model { return [(model, port)] }
        }
        let detected: [GPhotoCamera.Detected]
        do { detected = try GPhotoCamera.detect() } catch {
            throw ShutterError(.noCamera, "could not look for cameras: \(error)")
        }
        let matching = detected.filter { camera in
            (options.model.map { camera.model == $0 } ?? true) && (options.port.map { camera.port == $0 } ?? true)
        }
        guard !matching.isEmpty else {
            let seen = detected.isEmpty ? "none detected" : "detected: " + detected.map { "\($0.model) at \($0.port)" }.joined(separator: ", ")
            throw ShutterError(.noCamera, "no camera found" + (options.model.map { " matching model '\($0)'" } ?? "") + " (\(seen))",
                               fix: "connect the camera by USB, switch it on and to PTP/tether mode; `shutterpipe cameras` lists what is detected")
        }
        let preferred = matching.filter { $0.model == known?.model && $0.port == known?.port } + matching
        return preferred.map { ($0.model, $0.port) }
    }

    /// Applies the configured settings (and those changed during the session), all or
    /// none, each checked against the camera's own choices.
    static func apply(_ settings: [String: String], to camera: GPhotoCamera) throws(ShutterError) {
        guard !settings.isEmpty else { return }
        let changes = settings.sorted { $0.key < $1.key }.map { SettingChange(key: $0.key, value: $0.value) }
        do {
            for setting in try CameraSettings.apply(changes, to: camera, fix: "use one of the choices in 'settings'") {
                WorkerLog.info("\(setting.key) set to \(setting.value)")
            }
        } catch {
            switch error {
            case .refused(let refusal): throw refusal.error
            case .camera(let failure): throw ShutterError(.invalidConfiguration, "\(camera.model) refused a setting: \(failure)")
            }
        }
    }

    static func openError(_ failure: GPhotoFailure, model: String, port: String) -> ShutterError {
        switch failure.code {
        case GP_ERROR_IO_USB_CLAIM, GP_ERROR_IO_LOCK:
            return ShutterError(.permissionDenied, "the camera at \(port) is held by another program (usually the desktop's gvfs)",
                                fix: "run `gio mount -s gphoto2` and `pkill -f gvfs-gphoto2-volume-monitor`, close other photo programs, then enter again")
        case GP_ERROR_MODEL_NOT_FOUND:
            return ShutterError(.noCamera, "libgphoto2 has no driver for '\(model)'", fix: "check 'model' against `shutterpipe cameras`")
        case GP_ERROR_UNKNOWN_PORT:
            return ShutterError(.noCamera, "no port '\(port)'", fix: "check 'port' against `shutterpipe cameras`")
        default:
            return ShutterError(.noCamera, "cannot open \(model) at \(port): \(failure)",
                                fix: "check that the camera is connected, on and awake")
        }
    }
}
