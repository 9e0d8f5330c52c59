import CGPhoto2
import Foundation
import GPhoto2Backend
import ShutterPipeKit
import ShutterPipeSupport

/// Choosing the camera a selection names, opening it, the errors that give the fix, and
/// the settings applied on open.
enum CameraOpening {
    /// A camera opened, and the settings it refused and that were left out (a reopen only).
    struct Opened {
        var camera: GPhotoCamera
        var dropped: [Refused]
    }

    /// A setting the camera did not take on a reopen, and the camera's reason.
    struct Refused {
        var change: SettingChange
        var reason: String
    }

    /// Opens the camera `selection` names; `known` is the camera opened before (a
    /// reconnection looks for the same one). With `strict` (an enter), the config's
    /// settings are all or none and a refusal fails the open; otherwise (a reopen) every
    /// setting is applied on its own and one refused is left out: a camera that went away
    /// comes back whatever its settings. The session's values (`replay`) are always
    /// applied that way.
    static func open(_ selection: CameraSelection, known: CameraIdentity?, strict: Bool) throws(ShutterError) -> Opened {
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
            var dropped: [Refused] = []
            let configured = selection.settings.sorted { $0.key < $1.key }.map { SettingChange(key: $0.key, value: $0.value) }
            if strict {
                do throws(ShutterError) { try apply(configured, to: camera) } catch {
                    camera.close()
                    throw error
                }
            } else {
                dropped += applyEach(configured, to: camera)
            }
            dropped += applyEach(selection.replay, to: camera)
            return Opened(camera: camera, dropped: dropped)
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

    /// Applies the configured settings, all or none, each checked against the camera's
    /// own choices.
    static func apply(_ changes: [SettingChange], to camera: GPhotoCamera) throws(ShutterError) {
        guard !changes.isEmpty else { return }
        do {
            let applied = try CameraSettings.apply(changes, to: camera, fix: "use one of the choices in 'settings'")
            for (change, setting) in zip(changes, applied) { WorkerLog.info(CameraSettings.logText(change, setting)) }
        } catch {
            switch error {
            case .refused(let refusal): throw refusal.error
            case .camera(let failure): throw ShutterError(.invalidConfiguration, "\(camera.model) refused a setting: \(failure)")
            }
        }
    }

    /// Applies each change on its own; returns those the camera refused, with its reason.
    static func applyEach(_ changes: [SettingChange], to camera: GPhotoCamera) -> [Refused] {
        var refused: [Refused] = []
        for change in changes {
            do {
                let applied = try CameraSettings.apply([change], to: camera, fix: "set it again once the camera takes it")
                for setting in applied { WorkerLog.info(CameraSettings.logText(change, setting)) }
            } catch {
                switch error {
                case .refused(let refusal): refused.append(Refused(change: change, reason: refusal.error.message))
                case .camera(let failure): refused.append(Refused(change: change, reason: "\(failure)"))
                }
            }
        }
        return refused
    }

    static func openError(_ failure: GPhotoFailure, model: String, port: String) -> ShutterError {
        let refused = DriverFolders.unreadable
        if !refused.isEmpty, [GP_ERROR_LIBRARY, GP_ERROR_MODEL_NOT_FOUND, GP_ERROR_UNKNOWN_PORT].contains(failure.code) {
            return ShutterError(.permissionDenied, "cannot open \(model) at \(port): \(failure): the confined camera worker cannot read \(DriverFolders.describe(refused))",
                                fix: DriverFolders.fix(refused))
        }
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
