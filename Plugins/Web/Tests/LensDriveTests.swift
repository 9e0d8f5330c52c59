import Foundation
import ShutterPipeKit
import Testing
@testable import WebTrigger

/// How the page's lens buttons are worded for each maker's focus setting, as libgphoto2
/// names them. The virtual camera has the PTP standard's FocusDistance only (the page's
/// tests drive it); Canon's, Olympus's and Nikon's `manualfocusdrive` are read here from
/// settings as libgphoto2 lists them on those cameras.
@Suite("web: the lens drive's changes, for every kind of focus setting")
struct LensDriveTests {
    static func setting(_ key: String, _ kind: CameraSetting.Kind, _ value: String, choices: [String] = [], range: SettingRange? = nil, readOnly: Bool = false) -> CameraSetting {
        CameraSetting(key: key, label: key, kind: kind, value: value, choices: choices, range: range, readOnly: readOnly)
    }

    @Test("Canon EOS: manualfocusdrive's Near/Far 1–3 menu, one choice a button; a camera offering only size 1 and 2 gets 2 for the largest step")
    func canonSteps() throws {
        let full = LensDrive([Self.setting("manualfocusdrive", .menu, "None", choices: ["Near 1", "Near 2", "Near 3", "None", "Far 1", "Far 2", "Far 3"]),
                              Self.setting("autofocusdrive", .toggle, "0")])
        #expect(full.json["drive"] as? Bool == true && full.json["autofocus"] as? Bool == true)
        #expect(try full.change(.near, step: 3).get() == SettingChange(key: "manualfocusdrive", value: "Near 3"))
        #expect(try full.change(.far, step: 1).get() == SettingChange(key: "manualfocusdrive", value: "Far 1"))
        #expect(try full.autofocusChange.get() == SettingChange(key: "autofocusdrive", value: "1"))
        let two = LensDrive([Self.setting("manualfocusdrive", .menu, "None", choices: ["Near 1", "Near 2", "None", "Far 1", "Far 2"])])
        #expect(try two.change(.far, step: 3).get() == SettingChange(key: "manualfocusdrive", value: "Far 2"))
        #expect(two.json["autofocus"] as? Bool == false)
    }

    @Test("Nikon: manualfocusdrive as a signed range: ±20, ±200, ±1000, inside its bounds")
    func nikonRange() throws {
        let drive = LensDrive([Self.setting("manualfocusdrive", .range, "0", range: SettingRange(minimum: -500, maximum: 32767, step: 1))])
        #expect(try drive.change(.near, step: 1).get() == SettingChange(key: "manualfocusdrive", value: "-20"))
        #expect(try drive.change(.far, step: 2).get() == SettingChange(key: "manualfocusdrive", value: "200"))
        #expect(try drive.change(.near, step: 3).get() == SettingChange(key: "manualfocusdrive", value: "-500"), "the range's own bound")
    }

    @Test("FocusDistance: 1, 3 or 10 choices nearer or farther, nearest first whatever the menu's order; at the lens's end, a refusal that says so")
    func focusDistance() throws {
        let choices = ["infinite", "1000 mm", "300 mm", "500 mm", "700 mm"]
        let drive = LensDrive([Self.setting("focusdistance", .menu, "500 mm", choices: choices)])
        #expect(try drive.change(.far, step: 1).get() == SettingChange(key: "focusdistance", value: "700 mm"))
        #expect(try drive.change(.far, step: 2).get() == SettingChange(key: "focusdistance", value: "infinite"))
        #expect(try drive.change(.near, step: 3).get() == SettingChange(key: "focusdistance", value: "300 mm"))
        let atEnd = LensDrive([Self.setting("focusdistance", .menu, "300 mm", choices: choices)])
        #expect(throws: ShutterError.self) { try atEnd.change(.near, step: 1).get() }
        if case .failure(let error) = atEnd.change(.near, step: 1) { #expect(error.message.contains("nearest focus distance (300 mm)"), "\(error.message)") }
    }

    @Test("no buttons: a camera without a writable focus setting, or with a read-only one")
    func none() {
        let plain = LensDrive([Self.setting("iso", .menu, "100", choices: ["100", "200"])])
        #expect(plain.json["drive"] as? Bool == false && plain.json["autofocus"] as? Bool == false)
        let readOnly = LensDrive([Self.setting("focusdistance", .menu, "500 mm", choices: ["300 mm", "500 mm"], readOnly: true)])
        #expect(readOnly.json["drive"] as? Bool == false)
        if case .failure(let error) = plain.change(.far, step: 1) { #expect(error.message.contains("no lens drive")) } else { Issue.record("a camera without focus drive moved its lens") }
    }
}
