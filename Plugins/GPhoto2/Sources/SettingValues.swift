import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// The names a setting goes by. Config keys and `shutterpipe set` take friendly names
/// with the usual libgphoto2 widget names behind them (`aperture` is `aperture` on Canon
/// and `f-number` on generic PTP cameras); answers use the widget's own name.
public enum SettingNames {
    /// Widget names to try for a key, in order.
    public static func widgetNames(for key: String) -> [String] {
        switch key.lowercased() {
        case "iso": return ["iso", "isospeed"]
        case "shutterspeed": return ["shutterspeed", "shutterspeed2", "exptime"]
        case "aperture": return ["aperture", "f-number", "fnumber"]
        case "imageformat": return ["imageformat", "imagequality"]
        case "capturetarget": return ["capturetarget"]
        default: return [key]
        }
    }

    /// Whether `key` may name the widget `widget`.
    public static func key(_ key: String, names widget: String) -> Bool {
        widgetNames(for: key).contains { $0.caseInsensitiveCompare(widget) == .orderedSame }
    }
}

/// Matching a wanted value to what a camera setting takes.
///
/// Values match a menu's choice exactly (case-insensitive), or by number: `1/125` matches
/// `0.0080s`, `8` matches `f/8`, `200` matches `ISO 200`. Ranges take a number within
/// their bounds, toggles `0`/`1` (or on/off, true/false), dates seconds since 1970 or
/// `now`.
public enum SettingValues {
    /// What to give libgphoto2 for a widget of each kind.
    public enum WidgetValue: Equatable {
        case text(String)
        case number(Float)
        case integer(Int32)
    }

    /// The value `wanted` stands for in `setting`, or why it cannot be set.
    public static func target(_ wanted: String, for setting: CameraSetting) -> Result<WidgetValue, RefusalReason> {
        let value = wanted.trimmingCharacters(in: .whitespaces)
        guard !setting.readOnly else { return .failure(.readOnly) }
        switch setting.kind {
        case .menu:
            guard let choice = choice(matching: value, in: setting.choices) else { return .failure(.notOffered) }
            return .success(.text(choice))
        case .text:
            return .success(.text(value))
        case .range:
            guard let number = number(in: value) else { return .failure(.notOffered) }
            if let range = setting.range {
                let slack = max(abs(range.step), 1e-6) / 2
                guard number >= range.minimum - slack, number <= range.maximum + slack else { return .failure(.notOffered) }
            }
            return .success(.number(Float(number)))
        case .toggle:
            switch value.lowercased() {
            case "1", "on", "true", "yes": return .success(.integer(1))
            case "0", "off", "false", "no": return .success(.integer(0))
            default: return .failure(.notOffered)
            }
        case .date:
            if value.lowercased() == "now" { return .success(.integer(Int32(truncatingIfNeeded: Int(Date().timeIntervalSince1970)))) }
            guard let seconds = Int32(value) else { return .failure(.notOffered) }
            return .success(.integer(seconds))
        case .button:
            return .failure(.readOnly)
        @unknown default:
            return .failure(.readOnly)  // a kind newer than this plugin: shown, never written
        }
    }

    /// Why a value cannot be set.
    public enum RefusalReason: Error, Equatable {
        case notOffered
        case readOnly
    }

    /// The choice `value` names, if any.
    public static func choice(matching value: String, in choices: [String]) -> String? {
        let wanted = value.trimmingCharacters(in: .whitespaces)
        if let exact = choices.first(where: { $0.caseInsensitiveCompare(wanted) == .orderedSame }) { return exact }
        guard let number = Self.number(in: wanted) else { return nil }
        return choices.first { choice in
            guard let candidate = Self.number(in: choice) else { return false }
            return abs(candidate - number) <= max(abs(number), 1e-9) * 0.01
        }
    }

    /// The number a setting text stands for (Support's ``SettingText``).
    public static func number(in text: String) -> Double? {
        SettingText.number(in: text)
    }

    /// Checks a batch of changes against the settings they name (`nil`: the camera has no
    /// such setting), every problem at once: the widget values to set, in order, or the
    /// refusal that names each problem and carries the settings concerned.
    public static func check(_ changes: [SettingChange], against found: [SettingChange: CameraSetting], model: String,
                             fix: String) -> Result<[WidgetValue], SettingsRefusal> {
        var targets: [WidgetValue] = []
        var problems: [String] = []
        var concerned: [CameraSetting] = []
        var unknown = false
        for change in changes {
            guard let setting = found[change] else {
                problems.append("\(model) has no setting '\(change.key)'")
                unknown = true
                continue
            }
            concerned.append(setting)
            switch target(change.value, for: setting) {
            case .success(let value): targets.append(value)
            case .failure(.readOnly): problems.append("'\(setting.key)' is read-only on \(model)")
            case .failure(.notOffered):
                problems.append("\(change.key) '\(change.value)' is not offered by \(model); \(setting.kind == .menu ? "choices" : "it takes"): \(setting.allowedValues)")
            }
        }
        guard problems.isEmpty else {
            return .failure(SettingsRefusal(ShutterError(.invalidConfiguration, problems.joined(separator: "; "),
                                                         fix: unknown ? "`shutterpipe camera settings` lists the settings this camera has" : fix),
                                            settings: concerned))
        }
        return .success(targets)
    }
}

/// Values and actions. libgphoto2 exposes both as settings: a value (ISO, aperture, shutter
/// speed, white balance, image format) holds until changed, and is applied again whenever
/// the camera is reopened; an action (`opcode`, `bulb`, a focus drive, `capture`, a clock
/// sync) does something once when set, and reads back a placeholder
/// (`0x1001,0xparam1,0xparam2`) or nothing. An action replayed on reopen would repeat it
/// (or send the placeholder, which the camera refuses): actions are sent once and never kept.
public enum SettingRoles {
    /// Whether setting it does something once rather than hold a value: a button, a date
    /// (the clock moves on: replaying a time sets it wrong), or one of libgphoto2's
    /// actions (its `actions` section, in every driver).
    public static func isAction(_ setting: CameraSetting) -> Bool {
        setting.kind == .button || setting.kind == .date || setting.section == "actions"
            || actionWidgets.contains(setting.key.lowercased())
    }

    /// The widgets of libgphoto2's `actions` section (camlibs/ptp2/config.c,
    /// `camera_actions_menu`, 2.5.x), and the clock syncs of other sections.
    static let actionWidgets: Set<String> = [
        "autofocus", "autofocusdrive", "autofocusdrivemanual", "manualfocus", "manualfocusdrive", "cancelautofocus",
        "changeafarea", "controlmode", "capture", "bulb", "movie", "eosmoviemode", "eosremoterelease", "eoszoom",
        "eoszoomposition", "viewfinder", "focuslock", "focusmagnifier", "focusmagnifierexit", "focuspoint", "spotfocusarea",
        "zoompos", "uilock", "popupflash", "powerdown", "remotekeyup", "remotekeydown", "remotekeyleft", "remotekeyright",
        "disablemodedial", "chdk_script", "opcode", "syncdatetime", "syncdatetimeutc", "datetime", "datetimeutc",
    ]

    /// "menu", or "text, action": the kind, and whether it is an action.
    public static func kindText(_ setting: CameraSetting) -> String {
        isAction(setting) && setting.kind != .button ? "\(setting.kind.rawValue), action" : setting.kind.rawValue
    }

    /// The values to apply again on every reopen after `changes` were made and read back
    /// as `applied` (in the same order): each value setting as it was asked for (`1/250`,
    /// not the camera's `0.0040s`: never a read-back), under its widget's name, replacing
    /// an earlier change of it; actions are left out.
    public static func kept(_ kept: [SettingChange], after changes: [SettingChange], applied: [CameraSetting]) -> [SettingChange] {
        var result = kept
        for (change, setting) in zip(changes, applied) where !isAction(setting) {
            result.removeAll { SettingNames.key($0.key, names: setting.key) || SettingNames.key(change.key, names: $0.key) }
            result.append(SettingChange(key: setting.key, value: change.value))
        }
        return result
    }
}

extension CameraSelection {
    /// The selection with the values changed during the session (``SettingRoles/kept(_:after:applied:)``)
    /// to apply again on open, after the config's: a camera opened again (after a
    /// reconnection, a restarted worker, the next enter) gets the values the photographer
    /// chose last, and where the camera no longer takes one of them, the config's.
    public func withSessionSettings(_ kept: [SettingChange]) -> CameraSelection {
        var selection = self
        selection.replay = kept
        return selection
    }
}
