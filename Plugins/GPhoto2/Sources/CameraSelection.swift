import CGPhoto2
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// Choosing the camera a config names, opening errors that give the fix, and the
/// settings applied on enter.
extension GPhoto2Backend {
    static func select(_ options: Options, known: (model: String, port: String, serial: String?)?) throws(ShutterError) -> (String, String) {
        if let port = options.port ?? (known?.port.hasPrefix("ptpip:") == true ? known?.port : nil) {
            if port.hasPrefix("ptpip:") { return (options.model ?? "PTP/IP Camera", port) }
            if let model = options.model ?? known?.model { return (model, port) }
        }
        let detected: [GPhotoCamera.Detected]
        do { detected = try GPhotoCamera.detect() } catch {
            throw ShutterError(.noCamera, "could not look for cameras: \(error)")
        }
        let matching = detected.filter { camera in
            (options.model.map { camera.model == $0 } ?? true) && (options.port.map { camera.port == $0 } ?? true)
        }
        guard let chosen = matching.first(where: { $0.model == known?.model }) ?? matching.first else {
            let seen = detected.isEmpty ? "none detected" : "detected: " + detected.map { "\($0.model) at \($0.port)" }.joined(separator: ", ")
            throw ShutterError(.noCamera, "no camera found" + (options.model.map { " matching model '\($0)'" } ?? "") + " (\(seen))",
                               fix: "connect the camera by USB, switch it on and to PTP/tether mode; `shutterpipe cameras` lists what is detected")
        }
        return (chosen.model, chosen.port)
    }

    /// Applies the configured settings, each checked against the camera's own choices.
    static func apply(_ settings: [String: String], to camera: GPhotoCamera, log: Logger) throws(ShutterError) {
        for (key, value) in settings.sorted(by: { $0.key < $1.key }) {
            var found: GPhotoCamera.Setting?
            for name in CameraSettings.widgetNames(for: key) {
                if let setting = try? camera.setting(name) { found = setting; break }
            }
            guard let setting = found else {
                throw ShutterError(.invalidConfiguration, "\(camera.model) has no setting '\(key)'",
                                   fix: "see `gphoto2 --list-config` for the names this camera knows")
            }
            guard !setting.readOnly else {
                throw ShutterError(.invalidConfiguration, "'\(key)' is read-only on \(camera.model)")
            }
            let target: String
            if setting.choices.isEmpty {
                target = value
            } else {
                guard let choice = CameraSettings.choice(matching: value, in: setting.choices) else {
                    throw ShutterError(.invalidConfiguration, "\(key) '\(value)' is not offered by \(camera.model); choices: \(setting.choices.joined(separator: ", "))",
                                       fix: "use one of the choices in 'settings'")
                }
                target = choice
            }
            do { try camera.set(setting.name, to: target) } catch {
                throw ShutterError(.invalidConfiguration, "\(camera.model) refused \(key) '\(value)': \(error)")
            }
            log.info("\(key) set to \(target)")
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
