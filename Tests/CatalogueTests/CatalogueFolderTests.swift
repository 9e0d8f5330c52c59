#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import ShutterPipeCatalogue
import TestSupport
import Testing

/// The catalogue's folder holds its database, SQLite's journal files and the page's
/// previews: whoever may change it could hand the session files of their choosing
/// (docs/security.md, "The capture folder").
@Suite("catalogue: its folder")
struct CatalogueFolderTests {
    @Test("the catalogue's own .shutterpipe that every user may write (made under umask 0) is made 0755 and used; any other folder every user may write is refused and left as it was; a link in its place is refused with the fix, and nothing is made where it points")
    func folderRules() async throws {
        let folder = TemporaryDirectory("catalogue-folder")
        let open = folder.file("open/.shutterpipe")
        #expect(mkdir(folder.file("open"), 0o755) == 0 && mkdir(open, 0o755) == 0 && chmod(open, 0o777) == 0)
        _ = try await offThePool { try Catalogue.open(at: "\(open)/catalogue.sqlite") }  // creates it: commits
        var info = stat()
        #expect(stat(open, &info) == 0 && info.st_mode & 0o777 == 0o755, "mode \(String(info.st_mode & 0o777, radix: 8))")

        // Any other folder every user may write (/tmp, a shared drop folder) is refused, never changed.
        let shared = folder.file("shared")
        #expect(mkdir(shared, 0o755) == 0 && chmod(shared, 0o1777) == 0)
        do {
            _ = try Catalogue.open(at: "\(shared)/catalogue.sqlite")
            Issue.record("opened in a folder every user may write")
        } catch {
            #expect(error.description.contains("may be written by every user (mode 1777)"), "\(error)")
        }
        #expect(stat(shared, &info) == 0 && info.st_mode & 0o7777 == 0o1777, "left as it was")

        let elsewhere = folder.file("elsewhere")
        #expect(mkdir(elsewhere, 0o700) == 0 && symlink(elsewhere, folder.file("linked")) == 0)
        do {
            _ = try Catalogue.open(at: folder.file("linked/catalogue.sqlite"))
            Issue.record("opened through a link")
        } catch {
            #expect(error.description.contains("its folder '\(folder.file("linked"))' is a symbolic link (never followed)") && error.description.contains("remove that folder"), "\(error)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
    }
}
