import CGPhoto2
import Foundation

/// Reading and changing a camera's configuration widgets.
extension GPhotoCamera {
    /// A configuration widget: its current value and its choices (for menus).
    struct Setting: Sendable {
        var name: String
        var value: String
        var choices: [String]
        var readOnly: Bool
    }

    /// Reads the widget `name`, or `nil` when the camera has none by that name.
    func setting(_ name: String) throws(GPhotoFailure) -> Setting? {
        var window: OpaquePointer?
        try check(gp_camera_get_config(camera, &window, context), "reading the camera settings")
        defer { gp_widget_free(window) }
        var widget: OpaquePointer?
        guard gp_widget_get_child_by_name(window, name, &widget) == GP_OK, let widget else { return nil }
        return Self.describe(widget, name: name)
    }

    /// Sets the widget `name` to `value` (one of its choices, for menus).
    func set(_ name: String, to value: String) throws(GPhotoFailure) {
        var window: OpaquePointer?
        try check(gp_camera_get_config(camera, &window, context), "reading the camera settings")
        defer { gp_widget_free(window) }
        var widget: OpaquePointer?
        try check(gp_widget_get_child_by_name(window, name, &widget), "finding setting '\(name)'")
        try check(value.withCString { gp_widget_set_value(widget, $0) }, "setting '\(name)'")
        try check(gp_camera_set_config(camera, window, context), "setting '\(name)' on the camera")
    }

    static func describe(_ widget: OpaquePointer, name: String) -> Setting {
        var type = CameraWidgetType(0)
        gp_widget_get_type(widget, &type)
        var readOnly: Int32 = 0
        gp_widget_get_readonly(widget, &readOnly)
        var value = ""
        switch type {
        case GP_WIDGET_TEXT, GP_WIDGET_RADIO, GP_WIDGET_MENU:
            var text: UnsafePointer<CChar>?
            gp_widget_get_value(widget, &text)
            value = text.map { String(cString: $0) } ?? ""
        case GP_WIDGET_RANGE:
            var number: Float = 0
            gp_widget_get_value(widget, &number)
            value = String(number)
        case GP_WIDGET_TOGGLE:
            var number: Int32 = 0
            gp_widget_get_value(widget, &number)
            value = String(number)
        default:
            break
        }
        var choices: [String] = []
        let menu = type == GP_WIDGET_RADIO || type == GP_WIDGET_MENU  // only these have choices
        for index in 0..<(menu ? max(0, gp_widget_count_choices(widget)) : 0) {
            var choice: UnsafePointer<CChar>?
            if gp_widget_get_choice(widget, index, &choice) == GP_OK, let choice { choices.append(String(cString: choice)) }
        }
        return Setting(name: name, value: value, choices: choices, readOnly: readOnly != 0)
    }
}
