import CGPhoto2
import Foundation
import GPhoto2Backend
import ShutterPipeKit

/// Reading and changing a camera's configuration widgets.
extension GPhotoCamera {
    /// Every setting the camera offers, in its own order, each with the section it is in.
    /// One read of the whole tree, as `gphoto2 --list-config` does.
    func allSettings() throws(GPhotoFailure) -> [CameraSetting] {
        var window: OpaquePointer?
        try check(gp_camera_get_config(camera, &window, context), "reading the camera settings")
        defer { gp_widget_free(window) }
        var settings: [CameraSetting] = []
        func walk(_ widget: OpaquePointer, section: String?) {
            var type = CameraWidgetType(0)
            gp_widget_get_type(widget, &type)
            let name = Self.text(of: widget, gp_widget_get_name)
            if type == GP_WIDGET_WINDOW || type == GP_WIDGET_SECTION {
                for index in 0..<max(0, gp_widget_count_children(widget)) {
                    var child: OpaquePointer?
                    if gp_widget_get_child(widget, index, &child) == GP_OK, let child {
                        walk(child, section: type == GP_WIDGET_SECTION ? name : section)
                    }
                }
                return
            }
            settings.append(Self.describe(widget, section: section))
        }
        if let window { walk(window, section: nil) }
        return settings
    }

    /// The setting a key names (a widget name, or a friendly one such as `aperture`), or
    /// `nil` when the camera has none by any of its names. Reads that one widget only.
    func setting(named key: String) throws(GPhotoFailure) -> CameraSetting? {
        for name in SettingNames.widgetNames(for: key) {
            var widget: OpaquePointer?
            let result = gp_camera_get_single_config(camera, name, &widget, context)
            if result == GP_ERROR_BAD_PARAMETERS || result == GP_ERROR_NOT_SUPPORTED {
                messages.clear()
                continue
            }
            try check(result, "reading setting '\(name)'")
            guard let widget else { continue }
            defer { gp_widget_free(widget) }
            var setting = Self.describe(widget, section: nil)
            setting.key = name  // a copied widget may not carry its name
            return setting
        }
        return nil
    }

    /// Sets the widget `name` to `value`, in one call to the camera.
    func set(_ name: String, to value: SettingValues.WidgetValue) throws(GPhotoFailure) {
        var widget: OpaquePointer?
        try check(gp_camera_get_single_config(camera, name, &widget, context), "reading setting '\(name)'")
        defer { gp_widget_free(widget) }
        let result: Int32
        switch value {
        case .text(let text): result = text.withCString { gp_widget_set_value(widget, $0) }
        case .number(var number): result = gp_widget_set_value(widget, &number)
        case .integer(var integer): result = gp_widget_set_value(widget, &integer)
        }
        try check(result, "setting '\(name)'")
        try check(gp_camera_set_single_config(camera, name, widget, context), "setting '\(name)' on the camera")
    }

    /// A widget as a ``CameraSetting``.
    static func describe(_ widget: OpaquePointer, section: String?) -> CameraSetting {
        var type = CameraWidgetType(0)
        gp_widget_get_type(widget, &type)
        var readOnly: Int32 = 0
        gp_widget_get_readonly(widget, &readOnly)
        let name = text(of: widget, gp_widget_get_name)
        let label = text(of: widget, gp_widget_get_label)
        var setting = CameraSetting(key: name, label: label, section: section, kind: .text, value: "", readOnly: readOnly != 0)
        switch type {
        case GP_WIDGET_TEXT, GP_WIDGET_RADIO, GP_WIDGET_MENU:
            var text: UnsafePointer<CChar>?
            gp_widget_get_value(widget, &text)
            setting.value = text.map { String(cString: $0) } ?? ""
            if type != GP_WIDGET_TEXT {
                setting.kind = .menu
                for index in 0..<max(0, gp_widget_count_choices(widget)) {
                    var choice: UnsafePointer<CChar>?
                    if gp_widget_get_choice(widget, index, &choice) == GP_OK, let choice { setting.choices.append(String(cString: choice)) }
                }
            }
        case GP_WIDGET_RANGE:
            var number: Float = 0
            gp_widget_get_value(widget, &number)
            var minimum: Float = 0, maximum: Float = 0, step: Float = 0
            gp_widget_get_range(widget, &minimum, &maximum, &step)
            setting.kind = .range
            setting.value = SettingRange.text(Double(number))
            setting.range = SettingRange(minimum: Double(minimum), maximum: Double(maximum), step: Double(step))
        case GP_WIDGET_TOGGLE, GP_WIDGET_DATE:
            var number: Int32 = 0
            gp_widget_get_value(widget, &number)
            setting.kind = type == GP_WIDGET_TOGGLE ? .toggle : .date
            setting.value = String(number)
        case GP_WIDGET_BUTTON:
            setting.kind = .button
            setting.readOnly = true
        default:
            break
        }
        return setting
    }

    private static func text(of widget: OpaquePointer, _ get: (OpaquePointer?, UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32) -> String {
        var text: UnsafePointer<CChar>?
        guard get(widget, &text) == GP_OK, let text else { return "" }
        return String(cString: text)
    }
}
