#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeSupport

/// The catalogue's folder: made by us, and trusted only when nobody else can change it.
extension Catalogue {
    /// Why the catalogue's folder cannot be trusted with it, if it cannot: a symbolic link
    /// (whoever may write the capture folder could put one where `.shutterpipe` was), a
    /// folder of another user's (not root's), or one that every user may write. The
    /// catalogue's journal files and the page's previews live there too.
    static func folderProblem(_ folder: String) -> String? {
        var status = stat()
        guard lstat(folder, &status) == 0 else { return nil }  // SQLite says what is missing
        switch status.st_mode & S_IFMT {
        case S_IFDIR: break
        case S_IFLNK: return "is a symbolic link (never followed)"
        default: return "is not a folder"
        }
        // FAT and exFAT disks (and FUSE ones) have no links, and every file's owner and
        // mode are the mount's: nothing to tell there.
        guard ConfinedFolder.ownersAreReal(folder) else { return nil }
        if status.st_uid != geteuid() && status.st_uid != 0 { return "belongs to another user (uid \(status.st_uid))" }
        if status.st_mode & 0o002 != 0 {
            // The catalogue's own folder, made under umask 0 or by an older version: made
            // 0755, not refused. Never another folder (as root, /tmp is root's).
            if PathName.lastComponent(folder) == ".shutterpipe" && status.st_uid == geteuid() && status.st_mode & S_ISVTX == 0
                && chmod(folder, mode_t(status.st_mode & 0o7755)) == 0 { return nil }
            return "may be written by every user (mode \(String(status.st_mode & 0o7777, radix: 8)))"
        }
        return nil
    }

    /// Makes the folder of the catalogue at `path` when there is none, 0755 whatever the
    /// umask: ours, and nobody else writes in it.
    static func makeFolder(of path: String) throws(CatalogueError) {
        let folder = PathName.parent(path)
        var status = stat()
        guard !folder.isEmpty && lstat(folder, &status) != 0 else { return }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            _ = chmod(folder, 0o755)
        } catch {
            throw CatalogueError("cannot make the catalogue's folder '\(folder)': \(error.localizedDescription); check its permissions, or set catalogue.path")
        }
    }
}
