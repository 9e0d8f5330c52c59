#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeImaging
import ShutterPipeSupport
import TestSupport
import Testing

@Suite("Support: input from outside (files, names, shared memory)")
struct UntrustedInputTests {
    @Test("UntrustedFile: a regular file is read whole through its descriptor; a link, a FIFO, a folder, a second name and a file over the limit are refused, each with its reason, without blocking")
    func untrustedFile() throws {
        let folder = TemporaryDirectory("untrusted-file")
        try Data("photo".utf8).writeTestFile(folder.file("a.jpg"))
        let limits = UntrustedFile.Limits(bytes: 100)
        #expect(try UntrustedFile.contents(of: folder.file("a.jpg"), limits: limits) == Data("photo".utf8))
        #expect(symlink(folder.file("a.jpg"), folder.file("link.jpg")) == 0)
        #expect(mkfifo(folder.file("fifo.jpg"), 0o644) == 0)
        #expect(mkdir(folder.file("dir.jpg"), 0o755) == 0)
        #expect(link(folder.file("a.jpg"), folder.file("second.jpg")) == 0)
        try Data(count: 101).writeTestFile(folder.file("big.jpg"))
        let reasons: [(String, UntrustedFileError.Reason)] = [
            ("link.jpg", .symbolicLink), ("fifo.jpg", .notRegular("a FIFO")), ("dir.jpg", .notRegular("a folder")),
            ("second.jpg", .hardLinked(2)), ("big.jpg", .tooLarge(size: 101, limit: 100)), ("missing.jpg", .missing),
        ]
        for (name, reason) in reasons {
            #expect(throws: UntrustedFileError(folder.file(name), reason)) { try UntrustedFile.contents(of: folder.file(name), limits: limits) }
        }
        // Several names are a documented choice: allowed when the caller says so.
        #expect(try UntrustedFile.contents(of: folder.file("second.jpg"), limits: .init(bytes: 100, links: 2)) == Data("photo".utf8))
    }

    @Test("UntrustedFile: a photo-sized file that grows past the limit after it was opened is refused, never cut at the limit (its buffer is larger than the limit)")
    func growsPastTheLimit() throws {
        let folder = TemporaryDirectory("untrusted-grows")
        let path = folder.file("growing.jpg")
        let limit = 5_000_000
        try Data(repeating: 1, count: limit).writeTestFile(path)
        let file = try UntrustedFile.open(path, limits: .init(bytes: Int64(limit)))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 2, count: 1_000_000))
        try handle.close()
        #expect(throws: UntrustedFileError(path, .tooLarge(size: Int64(limit) + 1, limit: Int64(limit)))) { try file.read() }
    }

    @Test("PhotoMemory: a photo-sized buffer becomes its Data without a copy, and once released is kept for the next (no fresh pages), up to the pool's limit; a buffer that grows past the size keeps its bytes")
    func photoMemory() throws {
        let pool = PhotoMemory.Pool(keeping: 16 << 20)
        let size = PhotoMemory.largeFrom + 12_345
        guard let first = PhotoMemory(capacity: size, pool: pool) else { Issue.record("no memory"); return }
        let capacity = first.capacity
        #expect(capacity >= size)
        first.base.initializeMemory(as: UInt8.self, repeating: 0xA5, count: size)
        let address = first.base
        var data: Data? = first.data(count: size)
        #expect(data?.count == size && data?.allSatisfy { $0 == 0xA5 } == true)
        data?.withUnsafeBytes { #expect($0.baseAddress == UnsafeRawPointer(address), "no copy") }
        #expect(pool.keptBytes == 0)
        data = nil
        #expect(pool.keptBytes >= size)
        // The next photo of about that size gets the same pages; its Data shows only what it wrote.
        guard let second = PhotoMemory(capacity: size - 100, pool: pool) else { Issue.record("no memory"); return }
        let reused = second.base == address
        #expect(reused)
        #expect(pool.keptBytes == 0)
        second.base.initializeMemory(as: UInt8.self, repeating: 0x11, count: 10)
        #expect(second.data(count: 10) == Data(repeating: 0x11, count: 10))
        // Past the limit, released buffers are unmapped, not kept.
        func fourAtOnce() -> Bool {
            guard let a = PhotoMemory(capacity: 6 << 20, pool: pool), let b = PhotoMemory(capacity: 6 << 20, pool: pool),
                  let c = PhotoMemory(capacity: 6 << 20, pool: pool), let d = PhotoMemory(capacity: 6 << 20, pool: pool) else { return false }
            return Set([a.base, b.base, c.base, d.base]).count == 4
        }
        #expect(fourAtOnce())
        #expect(pool.keptBytes <= 16 << 20 && pool.keptBytes > (16 << 20) - (6 << 20), "as many as fit, and no more: \(pool.keptBytes)")
        // A small buffer (malloc's) that grows past the size keeps its bytes.
        guard var growing = PhotoMemory(capacity: 1000, pool: pool) else { Issue.record("no memory"); return }
        growing.base.initializeMemory(as: UInt8.self, repeating: 7, count: 1000)
        let grew = growing.grow(to: 5 << 20)
        let grown = growing.capacity
        #expect(grew && grown >= 5 << 20)
        (growing.base + 1000).initializeMemory(as: UInt8.self, repeating: 8, count: 24)
        #expect(growing.data(count: 1024) == Data(repeating: 7, count: 1000) + Data(repeating: 8, count: 24))
    }

    @Test("ConfinedFolder: folders below the root are made and opened one name at a time; a link below the root is refused by name, one at the root is followed; a file made through pinned() lands in the folder opened, even after that folder was renamed and a link put in its place")
    func confinedFolder() throws {
        let folder = TemporaryDirectory("confined-folder")
        let root = folder.file("root"), elsewhere = folder.file("elsewhere")
        #expect(mkdir(root, 0o755) == 0 && mkdir(elsewhere, 0o755) == 0)
        let made = try ConfinedFolder.open("\(root)/A/B", below: root)
        #expect(made.path == "\(root)/A/B" && FileManager.default.fileExists(atPath: "\(root)/A/B"))
        // A name that begins with a combining mark is below its folder: bytes, not graphemes.
        #expect(try ConfinedFolder.open("\(root)/\u{301}ORDER-7", below: root).path == "\(root)/\u{301}ORDER-7")
        #expect(PathName.relative("\(root)/\u{301}ORDER-7/1.jpg", below: root) == "\u{301}ORDER-7/1.jpg")
        #expect(PathName.relative(root, below: root + "/") == "" && PathName.relative("/x", below: "/") == "x")
        #expect(PathName.relative("\(root)x/1.jpg", below: root) == nil)
        #expect(symlink(elsewhere, "\(root)/linked") == 0)
        do {
            _ = try ConfinedFolder.open("\(root)/linked/C", below: root)
            Issue.record("opened through a link")
        } catch {
            #expect(error.reason == .link && error.component == "\(root)/linked", "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: "\(elsewhere)/C"))
        #expect(throws: ConfinedFolder.Refusal.self) { try ConfinedFolder.open("\(root)/../elsewhere", below: root) }
        #expect(throws: ConfinedFolder.Refusal.self) { try ConfinedFolder.open("\(elsewhere)/x", below: root) }
        // The root itself may be a link: the machine's own layout.
        #expect(symlink(root, folder.file("root-link")) == 0)
        #expect(try ConfinedFolder.open(folder.file("root-link") + "/A", below: folder.file("root-link"), create: nil).path == folder.file("root-link") + "/A")
        // Renamed after the open, a link in its place: the file lands in the folder opened.
        #expect(rename("\(root)/A/B", "\(root)/A/B-moved") == 0 && symlink(elsewhere, "\(root)/A/B") == 0)
        try Data("photo".utf8).writeTestFile(made.pinned("photo.jpg"))
        #expect(FileManager.default.fileExists(atPath: "\(root)/A/B-moved/photo.jpg"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
        // Without the capture folder's marker above it, no folder is known to be inside one.
        #expect(ConfinedFolder.linkedFolder(above: "\(root)/A/B/photo.jpg") == nil)
        #expect(mkdir("\(root)/.shutterpipe", 0o755) == 0)
        #expect(ConfinedFolder.linkedFolder(above: "\(root)/A/B/photo.jpg") == "\(root)/A/B")
        #expect(ConfinedFolder.linkedFolder(above: "\(root)/A/B-moved/photo.jpg") == nil)
    }

    @Test("PathName splits on the byte /: a component that begins with a combining mark stays in its folder; names from outside are shown with invalid bytes escaped")
    func pathNames() {
        let path = "/out/ORDER/\u{301}ORDER-7-0001.jpg"
        #expect(PathName.lastComponent(path) == "\u{301}ORDER-7-0001.jpg")
        #expect(PathName.parent(path) == "/out/ORDER")
        #expect(PathName.components(path) == ["out", "ORDER", "\u{301}ORDER-7-0001.jpg"])
        #expect(PathName.fileExtension(path) == "jpg" && PathName.stem(path) == "\u{301}ORDER-7-0001")
        #expect(PathName.deletingExtension(path) == "/out/ORDER/\u{301}ORDER-7-0001")
        #expect(PathName.parent("c.jpg") == "" && PathName.parent("/c") == "/" && PathName.parent("a/b/") == "a")
        #expect(PathName.shown(Array("caf".utf8) + [0xE9] + Array("\n.jpg".utf8)) == "caf\\xe9\\n.jpg")
        #expect(PathName.nameProblem([0xE9]) != nil && PathName.nameProblem(Array("a\nb".utf8)) != nil && PathName.nameProblem(Array("Café.jpg".utf8)) == nil)
    }

    @Test("XMLText drops what XML forbids and escapes markup; SecretText masks secret values and a URL's user")
    func textOut() {
        #expect(XMLText.escaped("a<b>&'\"\u{1}\u{FFFE}\tc") == "a&lt;b&gt;&amp;&apos;&quot;\tc")
        #expect(SecretText.masked(":webdav,url='https://u:p@h/x',user=me,pass=SECRET,password2=S2,sas_url=S3:dir")
                == ":webdav,url='https://…@h/x',user=me,pass=…,password2=…,sas_url=…:dir")
    }

    @Test("a shared file is sealed before it is mapped: its sender can no longer shrink it under the mapping (which would raise SIGBUS)")
    func sealedSharedBytes() throws {
        let descriptor = try SharedBytes.create(named: "photo")
        defer { close(descriptor) }
        let bytes = [UInt8](repeating: 7, count: 1 << 20)
        #expect(write(descriptor, bytes, bytes.count) == bytes.count)
        let mapped = try SharedBytes.map(descriptor)
        #expect(mapped.count == bytes.count)
        #expect(ftruncate(descriptor, 10) != 0 && errno == EPERM, "the sender could shrink the mapped file")
        #expect(mapped.last == 7)
    }
}
