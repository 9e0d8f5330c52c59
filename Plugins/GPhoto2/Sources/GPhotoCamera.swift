import CGPhoto2
import Foundation
import ShutterPipeKit
import Synchronization

/// A libgphoto2 call that failed: its result code, the call, and what libgphoto2 said.
struct GPhotoFailure: Error, CustomStringConvertible {
    var code: Int32
    var operation: String
    var detail: String?

    var resultText: String { String(cString: gp_result_as_string(code)) }
    var description: String { "\(operation): \(resultText)" + (detail.map { " (\($0))" } ?? "") }

    /// Whether the connection to the camera is gone (unplugged, asleep, network down).
    var lostConnection: Bool {
        [GP_ERROR_IO, GP_ERROR_IO_READ, GP_ERROR_IO_WRITE, GP_ERROR_TIMEOUT, GP_ERROR_IO_USB_FIND, GP_ERROR_IO_INIT,
         GP_ERROR_CAMERA_ERROR].contains(code) || detail?.contains("PTP I/O") == true
    }
}

/// One camera opened through libgphoto2.
///
/// Not thread-safe, like libgphoto2 itself: every call happens on the backend's
/// `BlockingQueue` thread, which serialises access to the camera.
final class GPhotoCamera {
    /// A file on the camera.
    struct CameraPath: Equatable, Sendable {
        var folder: String
        var name: String
    }

    /// A camera libgphoto2 detected.
    struct Detected: Sendable, Equatable {
        var model: String
        var port: String
    }

    let model: String
    let port: String
    private let context: OpaquePointer
    private var camera: UnsafeMutablePointer<Camera>?
    private let messages = ContextMessages()

    /// Opens the camera `model` on `port` (for PTP/IP: model "PTP/IP Camera", port
    /// `ptpip:127.0.0.1:PORT:PORT`).
    init(model: String, port: String) throws(GPhotoFailure) {
        self.model = model
        self.port = port
        context = gp_context_new()
        messages.attach(to: context)
        var camera: UnsafeMutablePointer<Camera>?
        try check(gp_camera_new(&camera), "creating a camera")
        self.camera = camera
        do {
            var abilitiesList: OpaquePointer?
            try check(gp_abilities_list_new(&abilitiesList), "loading camera drivers")
            defer { gp_abilities_list_free(abilitiesList) }
            try check(gp_abilities_list_load(abilitiesList, context), "loading camera drivers")
            let modelIndex = gp_abilities_list_lookup_model(abilitiesList, model)
            try check(modelIndex, "looking up the driver for '\(model)'")
            var abilities = CameraAbilities()
            try check(gp_abilities_list_get_abilities(abilitiesList, modelIndex, &abilities), "reading the driver's abilities")
            try check(gp_camera_set_abilities(camera, abilities), "choosing the driver")

            var ports: OpaquePointer?
            try check(gp_port_info_list_new(&ports), "listing ports")
            defer { gp_port_info_list_free(ports) }
            try check(gp_port_info_list_load(ports), "listing ports")
            let portIndex = gp_port_info_list_lookup_path(ports, port)
            try check(portIndex, "looking up port '\(port)'")
            var info: GPPortInfo?
            try check(gp_port_info_list_get_info(ports, portIndex, &info), "reading port '\(port)'")
            try check(gp_camera_set_port_info(camera, info), "choosing port '\(port)'")
            try check(gp_camera_init(camera, context), "opening the camera")
        } catch {
            gp_camera_unref(camera)
            self.camera = nil
            throw error
        }
    }

    deinit {
        close()
        gp_context_unref(context)
    }

    /// Releases the camera (gp_camera_exit) so other programs can use it.
    func close() {
        guard let camera else { return }
        gp_camera_exit(camera, context)
        gp_camera_unref(camera)
        self.camera = nil
    }

    /// The cameras libgphoto2 finds on USB and serial ports (network cameras are not
    /// detected; name their port).
    static func detect() throws(GPhotoFailure) -> [Detected] {
        let context = gp_context_new()
        defer { gp_context_unref(context) }
        var list: OpaquePointer?
        guard gp_list_new(&list) == GP_OK else { throw GPhotoFailure(code: GP_ERROR_NO_MEMORY, operation: "listing cameras") }
        defer { gp_list_free(list) }
        let count = gp_camera_autodetect(list, context)
        guard count >= GP_OK else { throw GPhotoFailure(code: count, operation: "detecting cameras") }
        return (0..<count).compactMap { index in
            var name: UnsafePointer<CChar>?, value: UnsafePointer<CChar>?
            guard gp_list_get_name(list, index, &name) == GP_OK, gp_list_get_value(list, index, &value) == GP_OK,
                  let name, let value else { return nil }
            return Detected(model: String(cString: name), port: String(cString: value))
        }
    }

    // MARK: Information

    /// The camera's summary text.
    func summary() throws(GPhotoFailure) -> String {
        // CameraText is one 32 KiB char array, too large for Swift to import as a tuple.
        let raw = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<CameraText>.size, alignment: MemoryLayout<CameraText>.alignment)
        defer { raw.deallocate() }
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<CameraText>.size)
        try check(gp_camera_get_summary(camera, raw.assumingMemoryBound(to: CameraText.self), context), "reading the camera summary")
        return String(cString: raw.assumingMemoryBound(to: CChar.self))
    }

    /// The serial number from the summary, if the camera reports one.
    func serialNumber() -> String? {
        guard let summary = try? summary() else { return nil }
        for line in summary.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("Serial Number:") {
                let value = trimmed.dropFirst("Serial Number:".count).trimmingCharacters(in: .whitespaces)
                return value.isEmpty ? nil : value
            }
        }
        return nil
    }

    /// Free bytes on the camera's storage, summed, if it reports them.
    func freeBytes() -> Int64? {
        var storages: UnsafeMutablePointer<CameraStorageInformation>?
        var count: Int32 = 0
        guard gp_camera_get_storageinfo(camera, &storages, &count, context) == GP_OK, let storages else { return nil }
        defer { free(storages) }
        var total: Int64 = 0
        var known = false
        for index in 0..<Int(count) where storages[index].fields.rawValue & GP_STORAGEINFO_FREESPACEKBYTES.rawValue != 0 {
            total += Int64(storages[index].freekbytes) * 1024
            known = true
        }
        return known ? total : nil
    }

    /// Whether the camera still answers (a cheap storage query). After a dropped link
    /// libgphoto2 reports "PTP General Error" as often as an I/O error, so a failure is
    /// told apart from a lost camera by asking again.
    func responds() -> Bool {
        var storages: UnsafeMutablePointer<CameraStorageInformation>?
        var count: Int32 = 0
        let result = gp_camera_get_storageinfo(camera, &storages, &count, context)
        free(storages)
        messages.clear()
        return result >= GP_OK
    }

    /// Whether the driver can capture images.
    func canCapture() -> Bool {
        var abilities = CameraAbilities()
        guard gp_camera_get_abilities(camera, &abilities) == GP_OK else { return false }
        return abilities.operations.rawValue & GP_OPERATION_CAPTURE_IMAGE.rawValue != 0
    }

    // MARK: Settings

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

    private static func describe(_ widget: OpaquePointer, name: String) -> Setting {
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
        for index in 0..<max(0, gp_widget_count_choices(widget)) {
            var choice: UnsafePointer<CChar>?
            if gp_widget_get_choice(widget, index, &choice) == GP_OK, let choice { choices.append(String(cString: choice)) }
        }
        return Setting(name: name, value: value, choices: choices, readOnly: readOnly != 0)
    }

    // MARK: Capture and files

    /// Files already handed out, so a sibling left on the card is never taken twice.
    private var seen: Set<String> = []

    /// Takes a picture and returns every file of the exposure.
    ///
    /// libgphoto2's generic PTP capture reports only the last file the camera announced;
    /// the others (the RAW of a RAW+JPEG pair) are in the same folder with the same stem,
    /// or arrive as FILE_ADDED events.
    func capture() throws(GPhotoFailure) -> [CameraPath] {
        var path = CameraFilePath()
        try check(gp_camera_capture(camera, GP_CAPTURE_IMAGE, &path, context), "capturing")
        let reported = Self.cameraPath(&path)
        var paths: [CameraPath] = []
        let stem = Self.stem(reported.name)
        for name in (try? files(in: reported.folder)) ?? [] where name != reported.name && Self.stem(name) == stem {
            let sibling = CameraPath(folder: reported.folder, name: name)
            if !seen.contains("\(sibling.folder)/\(name)") { paths.append(sibling) }
        }
        paths.append(reported)
        for _ in 0..<16 {
            guard let event = try nextEvent(timeoutMilliseconds: 10) else { break }
            if case .fileAdded(let added) = event, !paths.contains(added) { paths.append(added) }
        }
        for path in paths { seen.insert("\(path.folder)/\(path.name)") }
        return paths
    }

    /// The file names in a camera folder.
    func files(in folder: String) throws(GPhotoFailure) -> [String] {
        var list: OpaquePointer?
        try check(gp_list_new(&list), "listing \(folder)")
        defer { gp_list_free(list) }
        try check(gp_camera_folder_list_files(camera, folder, list, context), "listing \(folder)")
        return (0..<max(0, gp_list_count(list))).compactMap { index in
            var name: UnsafePointer<CChar>?
            guard gp_list_get_name(list, index, &name) == GP_OK, let name else { return nil }
            return String(cString: name)
        }
    }

    private static func stem(_ name: String) -> String {
        name.lastIndex(of: ".").map { String(name[..<$0]) } ?? name
    }

    /// What `wait_for_event` reported.
    enum Event: Equatable {
        case fileAdded(CameraPath)
        case other
    }

    /// One event from the camera, or `nil` when there was none. (On PTP/IP this polls
    /// once and returns at once whatever the timeout; callers loop against their own
    /// deadline.)
    func nextEvent(timeoutMilliseconds: Int32) throws(GPhotoFailure) -> Event? {
        var type = GP_EVENT_UNKNOWN
        var data: UnsafeMutableRawPointer?
        try check(gp_camera_wait_for_event(camera, timeoutMilliseconds, &type, &data, context), "waiting for camera events")
        defer { free(data) }
        switch type {
        case GP_EVENT_TIMEOUT: return nil
        case GP_EVENT_FILE_ADDED:
            guard let data else { return .other }
            let path = Self.cameraPath(data.assumingMemoryBound(to: CameraFilePath.self))
            seen.insert("\(path.folder)/\(path.name)")
            return .fileAdded(path)
        default: return .other
        }
    }

    /// Downloads a file.
    func download(_ path: CameraPath) throws(GPhotoFailure) -> Data {
        var file: OpaquePointer?
        try check(gp_file_new(&file), "preparing a download")
        defer { gp_file_unref(file) }
        try check(gp_camera_file_get(camera, path.folder, path.name, GP_FILE_TYPE_NORMAL, file, context), "downloading \(path.name)")
        var bytes: UnsafePointer<CChar>?
        var size: UInt = 0
        try check(gp_file_get_data_and_size(file, &bytes, &size), "reading \(path.name)")
        guard let bytes else { return Data() }
        return Data(bytes: bytes, count: Int(size))
    }

    /// Deletes a file from the card.
    func delete(_ path: CameraPath) throws(GPhotoFailure) {
        try check(gp_camera_file_delete(camera, path.folder, path.name, context), "deleting \(path.name) from the card")
    }

    private static func cameraPath(_ path: UnsafeMutablePointer<CameraFilePath>) -> CameraPath {
        let folder = withUnsafeBytes(of: &path.pointee.folder) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
        let name = withUnsafeBytes(of: &path.pointee.name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
        return CameraPath(folder: folder, name: name)
    }

    private func check(_ code: Int32, _ operation: String) throws(GPhotoFailure) {
        guard code < GP_OK else { messages.clear(); return }
        throw GPhotoFailure(code: code, operation: operation, detail: messages.take())
    }
}

/// The error messages libgphoto2 reports through its context, for better failures.
private final class ContextMessages: @unchecked Sendable {
    // Touched only from the camera's thread (libgphoto2 calls back on the calling thread).
    private var lines: [String] = []

    func attach(to context: OpaquePointer) {
        gp_context_set_error_func(context, { _, text, data in
            guard let text, let data else { return }
            Unmanaged<ContextMessages>.fromOpaque(data).takeUnretainedValue().lines.append(String(cString: text))
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    func take() -> String? {
        defer { lines.removeAll() }
        return lines.isEmpty ? nil : lines.joined(separator: "; ")
    }

    func clear() { lines.removeAll() }
}
