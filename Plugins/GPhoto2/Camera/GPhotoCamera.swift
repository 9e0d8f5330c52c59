import CGPhoto2
import Foundation
import GPhoto2Backend

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
    typealias CameraPath = CardPath

    /// A camera libgphoto2 detected.
    struct Detected: Sendable, Equatable {
        var model: String
        var port: String
    }

    let model: String
    let port: String
    let context: OpaquePointer
    private(set) var camera: UnsafeMutablePointer<Camera>?
    let messages = ContextMessages()

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
            let abilitiesList = try CameraDrivers.shared.list(context)
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

    static func cameraPath(_ path: UnsafeMutablePointer<CameraFilePath>) -> CameraPath {
        let folder = withUnsafeBytes(of: &path.pointee.folder) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
        let name = withUnsafeBytes(of: &path.pointee.name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
        return CameraPath(folder: folder, name: name)
    }

    func check(_ code: Int32, _ operation: String) throws(GPhotoFailure) {
        guard code < GP_OK else { messages.clear(); return }
        throw GPhotoFailure(code: code, operation: operation, detail: messages.take())
    }
}

/// The error messages libgphoto2 reports through its context, for better failures.
final class ContextMessages: @unchecked Sendable {
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

/// libgphoto2's camera drivers (camlibs), loaded once per worker: loading them dlopens
/// some sixty libraries, which on a loaded two-core machine took seconds, and a camera
/// opened again after an outage or a restarted worker should not wait for that. The
/// worker loads them as soon as it starts (``preload()``), before its first request.
/// Confined to the camera thread, like everything of libgphoto2's.
final class CameraDrivers: @unchecked Sendable {
    static let shared = CameraDrivers()
    private var loaded: OpaquePointer?

    /// The loaded list of drivers.
    func list(_ context: OpaquePointer?) throws(GPhotoFailure) -> OpaquePointer {
        if let loaded { return loaded }
        var list: OpaquePointer?
        guard gp_abilities_list_new(&list) == GP_OK, let list else { throw GPhotoFailure(code: GP_ERROR_NO_MEMORY, operation: "loading camera drivers") }
        let result = gp_abilities_list_load(list, context)
        guard result >= GP_OK else {
            gp_abilities_list_free(list)
            throw GPhotoFailure(code: result, operation: "loading camera drivers")
        }
        loaded = list
        return list
    }

    /// Loads the drivers now, so the first open does not wait for them. A failure here is
    /// not lost: the first open loads them again and reports it.
    func preload() {
        _ = try? list(nil)
    }
}
