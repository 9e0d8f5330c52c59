import Foundation
import GPhoto2Backend
import ShutterPipeKit

/// A camera's clock set from the host's (`syncClock: true`), at every open: a rig whose
/// bodies disagree by seconds sorts its shots wrongly, and EXIF times come from the
/// camera's clock.
enum CameraClock {
    /// Reads the camera's clock, sets it from the host's, and says how far off it was (the
    /// camera's clock has whole seconds). Never fails an open: a camera without a clock
    /// setting, or one that refuses it, keeps its time, and the line says so.
    static func sync(_ camera: GPhotoCamera) -> String {
        // libgphoto2's `datetime` (PTP DateTime, 0x5011) where it can be read and set;
        // some bodies have only a button that does it (`syncdatetime`).
        let clock: CameraSetting?, button: CameraSetting?
        do throws(GPhotoFailure) {
            clock = try camera.setting(named: "datetime")
            button = try camera.setting(named: "syncdatetime")
        } catch {
            return "camera clock could not be read (\(error)): shots carry the camera's time"
        }
        if let clock, clock.kind == .date, !clock.readOnly, let seconds = Double(clock.value) {
            let offset = seconds - Date().timeIntervalSince1970
            do {
                _ = try CameraSettings.apply([SettingChange(key: "datetime", value: "now")], to: camera, fix: "set the clock on the camera")
            } catch {
                return "camera clock is \(describe(offset)) this host's and could not be set (\(reason(error))): shots carry the camera's time"
            }
            return "camera clock was \(describe(offset)) this host's; set from the host (syncClock)"
        }
        if let button, !button.readOnly {
            do {
                _ = try CameraSettings.apply([SettingChange(key: "syncdatetime", value: "1")], to: camera, fix: "set the clock on the camera")
                return "camera clock set from the host through its syncdatetime setting (syncClock); it does not tell how far off it was"
            } catch {
                return "camera clock could not be set (\(reason(error))): shots carry the camera's time"
            }
        }
        return "\(camera.model) has no clock setting libgphoto2 can set (datetime, syncdatetime): syncClock leaves its time as it is"
    }

    /// `3 s behind`, `1 d 2 h 5 min 7 s ahead of`, `in step with`.
    static func describe(_ offset: Double) -> String {
        let seconds = Int(offset.rounded())
        guard seconds != 0 else { return "in step with" }
        var rest = abs(seconds)
        var parts: [String] = []
        for (unit, size) in [("d", 86_400), ("h", 3_600), ("min", 60)] where rest >= size {
            parts.append("\(rest / size) \(unit)")
            rest %= size
        }
        if rest > 0 || parts.isEmpty { parts.append("\(rest) s") }
        return parts.joined(separator: " ") + (seconds < 0 ? " behind" : " ahead of")
    }

    private static func reason(_ error: CameraSettings.ApplyFailure) -> String {
        switch error {
        case .refused(let refusal): return refusal.error.message
        case .camera(let failure): return "\(failure)"
        }
    }
}
