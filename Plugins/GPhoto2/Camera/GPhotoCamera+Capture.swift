import CGPhoto2
import Foundation
import GPhoto2Backend

/// Capture, the files of an exposure, events, download and delete.
extension GPhotoCamera {
    /// Takes a picture and returns every file of the exposure.
    ///
    /// libgphoto2's generic PTP capture reports only the last file the camera announced;
    /// the others (the RAW of a RAW+JPEG pair) are in the same folder with the same stem,
    /// or arrive as FILE_ADDED events.
    func capture() throws(GPhotoFailure) -> [CameraPath] {
        var path = CameraFilePath()
        try check(gp_camera_capture(camera, GP_CAPTURE_IMAGE, &path, context), "capturing")
        let reported = Self.cameraPath(&path)
        // libgphoto2 added only the reported file to its cached listing of the folder: the
        // other files of the exposure (the RAW of RAW+JPEG) are missing from the cache from
        // the second shot of a session on, so the listing is made again.
        if let camera { gp_filesystem_reset(camera.pointee.fs) }
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

    static func stem(_ name: String) -> String {
        name.lastIndex(of: ".").map { String(name[..<$0]) } ?? name
    }

    /// What `wait_for_event` reported.
    enum Event: Equatable {
        case fileAdded(CameraPath)
        case other
    }

    /// One event from the camera, or `nil` when there was none. (On PTP/IP this polls
    /// once, about a millisecond whatever the timeout, measured with libgphoto2 2.5.30;
    /// callers loop against their own deadline.)
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

    /// Downloads a file into `descriptor` (an in-memory file the backend maps): libgphoto2
    /// writes the bytes there itself, so nothing is copied on the way. Returns the size.
    func download(_ path: CameraPath, into descriptor: Int32) throws(GPhotoFailure) -> Int {
        var file: OpaquePointer?
        // The CameraFile writes into a copy of the descriptor and closes it when freed.
        try check(gp_file_new_from_fd(&file, dup(descriptor)), "preparing a download")
        defer { gp_file_unref(file) }
        try check(gp_camera_file_get(camera, path.folder, path.name, GP_FILE_TYPE_NORMAL, file, context), "downloading \(path.name)")
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw GPhotoFailure(code: GP_ERROR_IO, operation: "downloading \(path.name)", detail: "fstat failed") }
        return Int(info.st_size)
    }

    /// The size the camera announced for a file (its ObjectInfo), if it says.
    func announcedSize(_ path: CameraPath) -> Int? {
        var info = CameraFileInfo()
        guard gp_camera_file_get_info(camera, path.folder, path.name, &info, context) == GP_OK,
              info.file.fields.rawValue & GP_FILE_INFO_SIZE.rawValue != 0 else { return nil }
        return Int(info.file.size)
    }

    /// Deletes a file from the card.
    func delete(_ path: CameraPath) throws(GPhotoFailure) {
        try check(gp_camera_file_delete(camera, path.folder, path.name, context), "deleting \(path.name) from the card")
    }
}
