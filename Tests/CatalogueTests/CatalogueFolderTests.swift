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
    @Test("a folder of ours that every user may write (made under umask 0) is made private and used; a link in its place is refused with the fix, and nothing is made where it points")
    func folderRules() throws {
        let folder = TemporaryDirectory("catalogue-folder")
        let open = folder.file("open")
        #expect(mkdir(open, 0o755) == 0 && chmod(open, 0o777) == 0)
        _ = try Catalogue.open(at: "\(open)/catalogue.sqlite")
        var info = stat()
        #expect(stat(open, &info) == 0 && info.st_mode & 0o777 == 0o755, "mode \(String(info.st_mode & 0o777, radix: 8))")

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
