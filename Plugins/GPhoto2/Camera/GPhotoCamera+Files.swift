import CGPhoto2
import Foundation
import GPhoto2Backend

extension GPhotoCamera {
    /// Every file on the camera's cards, folder by folder from `/`, with its size and time
    /// as the camera says (libgphoto2's listing: for PTP cameras, from the object list it
    /// reads once at open). Nil when `interrupted` says so between folders: a full card
    /// takes a while to list, and a capture must not wait for it.
    ///
    /// `hidden` gets the names the listing holds more than once (libgphoto2 lists and
    /// reaches only the first object of a name: ``LibraryComplaints``).
    func allFiles(interrupted: () -> Bool = { false }, hidden: inout [CameraPath]) throws(GPhotoFailure) -> [AddedFile]? {
        var found: [AddedFile] = []
        var folders = ["/"]
        while let folder = folders.popLast() {
            if interrupted() { return nil }
            for name in try names(in: folder, folders: true) { folders.append(folder == "/" ? "/\(name)" : "\(folder)/\(name)") }
            let (files, complaints) = try LibraryComplaints.collecting { () throws(GPhotoFailure) in try names(in: folder, folders: false) }
            for duplicate in LibraryComplaints.duplicateEntries(in: complaints) {
                hidden.append(CameraPath(folder: duplicate.folder, name: duplicate.name))
            }
            // A listing that repeats a name (a libgphoto2 that does not drop them) is as
            // out of reach past its first.
            var listed: Set<String> = []
            for name in files where !listed.insert(name).inserted { hidden.append(CameraPath(folder: folder, name: name)) }
            for name in listed.sorted() {
                let path = CameraPath(folder: folder, name: name)
                let info = info(path)
                found.append(AddedFile(path: path, size: info?.size, modified: info?.modified))
            }
        }
        return found.sorted { ($0.path.folder, $0.path.name) < ($1.path.folder, $1.path.name) }
    }

    private func names(in folder: String, folders: Bool) throws(GPhotoFailure) -> [String] {
        var list: OpaquePointer?
        try check(gp_list_new(&list), "listing \(folder)")
        defer { gp_list_free(list) }
        let code = folders ? gp_camera_folder_list_folders(camera, folder, list, context) : gp_camera_folder_list_files(camera, folder, list, context)
        try check(code, "listing \(folder) on the card")
        return (0..<max(0, gp_list_count(list))).compactMap { index in
            var name: UnsafePointer<CChar>?
            guard gp_list_get_name(list, index, &name) == GP_OK, let name else { return nil }
            return String(cString: name)
        }
    }
}
