#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// A stored photo, opened for a preview, a tile or a look at 100 %: a regular file, never
/// through a symbolic link. Whoever can put a link into the capture folder (a hook, a
/// synced folder, another user of a shared one) must not make the page serve what it
/// points at (`/etc/shadow`, another session's photos).
enum PhotoFile {
    /// Refuses a path that is missing, unreadable, a symbolic link or not a regular file,
    /// or that goes through a linked folder inside the capture folder.
    static func check(_ path: String) throws(ShutterError) {
        var info = stat()
        guard lstat(path, &info) == 0, access(path, R_OK) == 0 else {
            throw ShutterError(.storageUnavailable, "cannot read '\(path)'", fix: "the photo was moved or removed since it was stored")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw ShutterError(.storageUnavailable, "'\(path)' is not a regular file (a symbolic link, say): not served",
                               fix: "previews come only from the files the session stored; replace the link with the photo itself")
        }
        if let sparse = sparseness(info) {
            throw ShutterError(.storageUnavailable, "'\(path)' is \(sparse): not a photo the session stored, not read",
                               fix: "previews come only from the files the session stored; whoever may write the capture folder replaced it")
        }
        if let link = linkedFolder(above: path) {
            throw ShutterError(.storageUnavailable, "'\(path)' lies in '\(link)', a symbolic link inside the capture folder: not served",
                               fix: "the session makes its folders itself; replace the link with the folder it points to")
        }
    }

    /// The first folder between the photo and its capture folder that is a symbolic link
    /// (``ConfinedFolder/linkedFolder(above:marker:)``).
    static func linkedFolder(above path: String) -> String? {
        ConfinedFolder.linkedFolder(above: path)
    }

    /// The file's bytes, opened once without following a link (the check above is not
    /// enough: the file could be swapped for a link between the two) and read through that
    /// descriptor. Read, not mapped: whoever can write the capture folder could shorten
    /// the file under a mapping, and reading past its end through one raises SIGBUS.
    static func map(_ path: String) throws(ShutterError) -> Data {
        try check(path)
        do throws(UntrustedFileError) {
            let file = try UntrustedFile.open(path, limits: .init(bytes: Self.largest, links: Int.max))
            if let sparse = sparseness(file.status) {
                throw UntrustedFileError(path, .notRegular("\(sparse) (not a photo the session stored)"))
            }
            return try file.read()
        } catch {
            throw ShutterError(.storageUnavailable, "cannot read '\(path)': \(error.why)",
                               fix: "the photo was moved, removed or replaced by a link since it was stored")
        }
    }

    /// Why a file is not a photo: mostly holes (a sparse file costs its writer nothing and
    /// would cost the page its whole size in memory). Cameras and editors write every byte.
    static func sparseness(_ info: stat) -> String? {
        UntrustedFile.sparseness(info).map { "sparse (\(formatByteCount($0.size)), of which \(formatByteCount($0.written)) were written)" }
    }

    /// The largest photo read for the page: 4 GB (a 400 MP multi-shot TIFF is 2.4 GB).
    static let largest: Int64 = 4_000_000_000
}
