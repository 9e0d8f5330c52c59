import CGPhoto2
import Foundation
import ShutterPipeSupport
import Synchronization

/// The folders libgphoto2 loads its drivers from (camera drivers, `CAMLIBS`; port drivers,
/// `IOLIBS`), and the drivers in them a confined worker cannot read.
///
/// Landlock lets the worker read the system's folders, the folders of what it has mapped,
/// `CAMLIBS` and `IOLIBS`, and the gphoto2 option `workerReadPaths`. A driver linked from
/// somewhere else (a self-built libgphoto2's, linked into the system's folder) is refused
/// where the link points, and libgphoto2 says only "Error loading a library". The worker
/// tries each driver once after it is confined and names those it cannot read, with where
/// they point and the option that allows them.
enum DriverFolders {
    /// A driver the worker cannot read.
    struct Unreadable: Equatable, Sendable {
        /// The file in the driver folder.
        var path: String
        /// Where it leads, when that is another file (a link).
        var target: String?
        /// Why (strerror).
        var reason: String

        /// The folder to allow: the target's, or the file's own.
        var folder: String { PathName.parent(target ?? path) }
    }

    private static let found = Mutex<[Unreadable]>([])

    /// The drivers found unreadable at the worker's start (``check()``).
    static var unreadable: [Unreadable] { found.withLock { $0 } }

    /// `CAMLIBS` and `IOLIBS` if set, else where libgphoto2 looks by default: beside the
    /// library itself, in `libgphoto2/VERSION` and `libgphoto2_port/VERSION`.
    static func folders() -> [String] {
        let environment = ProcessInfo.processInfo.environment
        // Read to its end: Foundation's String(contentsOfFile:) stops at /proc's first
        // chunk (38 of 102 lines of a small process's maps), before libgphoto2's line.
        let mapped = (try? DescriptorIO.readFile("/proc/self/maps")).map { String(decoding: $0, as: UTF8.self) } ?? ""
        func libraryFolder(_ name: String) -> String? {
            for line in mapped.split(separator: "\n") {
                guard let slash = line.firstIndex(of: "/") else { continue }
                let file = String(line[slash...])
                if PathName.lastComponent(file).hasPrefix(name + ".so") { return PathName.parent(file) }
            }
            return nil
        }
        func version(_ strings: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> String? {
            strings?.pointee.map { String(cString: $0) }
        }
        var folders: [String] = []
        if let camlibs = environment["CAMLIBS"], !camlibs.isEmpty { folders.append(camlibs) }
        else if let folder = libraryFolder("libgphoto2"), let version = version(gp_library_version(GP_VERSION_SHORT)) {
            folders.append("\(folder)/libgphoto2/\(version)")
        }
        if let iolibs = environment["IOLIBS"], !iolibs.isEmpty { folders.append(iolibs) }
        else if let folder = libraryFolder("libgphoto2_port"), let version = version(gp_port_library_version(GP_VERSION_SHORT)) {
            folders.append("\(folder)/libgphoto2_port/\(version)")
        }
        return folders
    }

    /// Tries to open every driver in ``folders()`` (read-only, never run); keeps and
    /// returns those refused. Called once, right after the worker is confined.
    @discardableResult
    static func check() -> [Unreadable] {
        var refused: [Unreadable] = []
        for folder in folders() {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            for name in names.sorted() where name.hasSuffix(".so") {
                let path = "\(folder)/\(name)"
                let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
                if descriptor >= 0 { close(descriptor); continue }
                let reason = String(cString: strerror(errno))
                let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)).map { link in
                    link.hasPrefix("/") ? link : "\(folder)/\(link)"
                }
                refused.append(Unreadable(path: path, target: target, reason: reason))
            }
        }
        found.withLock { $0 = refused }
        return refused
    }

    /// "cannot read the driver /…/ptp2.so (a link to /opt/…/ptp2.so: Permission denied)
    /// and 3 more", for messages.
    static func describe(_ refused: [Unreadable]) -> String {
        let first = refused.prefix(3).map { file in
            file.target.map { "\(file.path) (a link to \($0): \(file.reason))" } ?? "\(file.path) (\(file.reason))"
        }
        return first.joined(separator: ", ") + (refused.count > 3 ? " and \(refused.count - 3) more" : "")
    }

    /// The fix: the folders to add to `workerReadPaths`.
    static func fix(_ refused: [Unreadable]) -> String {
        var folders: [String] = []
        for file in refused where !folders.contains(file.folder) { folders.append(file.folder) }
        return "let the worker read them with the gphoto2 option 'workerReadPaths: [\(folders.joined(separator: ", "))]', or run it unconfined with 'confineWorkers: false'"
    }
}
