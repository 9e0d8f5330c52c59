#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeSupport
import TestSupport
import Testing

@Suite("Support: durable writes of a plugin's own files")
struct DurableFileTests {
    @Test("replace writes the whole file with its mode and leaves no temporary file; over a link it replaces the link, never what it points at")
    func replace() throws {
        let folder = TemporaryDirectory("durable-replace")
        let path = folder.file("ledger.json")
        try DurableFile.replace(path, with: Data("first".utf8), mode: 0o640)
        try DurableFile.replace(path, with: Data("second, longer".utf8), mode: 0o640)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "second, longer")
        #expect((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) == 0o640)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["ledger.json"], "no temporary file left")

        let secret = folder.file("secret")
        try Data("private".utf8).write(to: URL(fileURLWithPath: secret))
        let linked = folder.file("linked.json")
        try FileManager.default.createSymbolicLink(atPath: linked, withDestinationPath: secret)
        try DurableFile.replace(linked, with: Data("mine".utf8))
        #expect(try String(contentsOfFile: secret, encoding: .utf8) == "private", "the link's target is untouched")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: linked)) == nil, "the link itself was replaced by a file")
        #expect(try String(contentsOfFile: linked, encoding: .utf8) == "mine")
    }

    @Test("create makes a new file in a held folder and never replaces one: a taken name, a link at the name, and the folder renamed meanwhile")
    func create() throws {
        let folder = TemporaryDirectory("durable-create")
        let descriptor = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        #expect(try DurableFile.create(Data("first".utf8), named: Array("a.jpg".utf8), in: descriptor, mode: 0o640))
        #expect(try String(contentsOfFile: folder.file("a.jpg"), encoding: .utf8) == "first")
        #expect((try FileManager.default.attributesOfItem(atPath: folder.file("a.jpg"))[.posixPermissions] as? Int) == 0o640)
        let again = try DurableFile.create(Data("second".utf8), named: Array("a.jpg".utf8), in: descriptor, mode: 0o640)
        #expect(!again, "a taken name is refused")
        #expect(try String(contentsOfFile: folder.file("a.jpg"), encoding: .utf8) == "first", "never replaced")
        // A link at the name is a taken name: what it points at is never written.
        let secret = folder.file("secret")
        try Data("private".utf8).write(to: URL(fileURLWithPath: secret))
        try FileManager.default.createSymbolicLink(atPath: folder.file("b.jpg"), withDestinationPath: secret)
        let linked = try DurableFile.create(Data("mine".utf8), named: Array("b.jpg".utf8), in: descriptor, mode: 0o600)
        #expect(!linked)
        #expect(try String(contentsOfFile: secret, encoding: .utf8) == "private")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["a.jpg", "b.jpg", "secret"], "no temporary file left")
        // The folder renamed after it was opened: the file lands in the folder held, not at its old path.
        let moved = folder.path + "-moved"
        #expect(rename(folder.path, moved) == 0)
        defer { rename(moved, folder.path) }
        #expect(try DurableFile.create(Data("third".utf8), named: Array("c.jpg".utf8), in: descriptor, mode: 0o600))
        #expect(try String(contentsOfFile: moved + "/c.jpg", encoding: .utf8) == "third")
    }

    @Test("append adds and creates, never through a link, and refuses a FIFO at once (no reader to wait for); each failure names the file")
    func append() throws {
        let folder = TemporaryDirectory("durable-append")
        let path = folder.file("journal")
        try DurableFile.append(Data("a\n".utf8), to: path)
        try DurableFile.append(Data("b\n".utf8), to: path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "a\nb\n")

        let secret = folder.file("authorized_keys")
        try Data("key\n".utf8).write(to: URL(fileURLWithPath: secret))
        let linked = folder.file("linked")
        try FileManager.default.createSymbolicLink(atPath: linked, withDestinationPath: secret)
        #expect(throws: SystemError.self) { try DurableFile.append(Data("attacker\n".utf8), to: linked) }
        #expect(try String(contentsOfFile: secret, encoding: .utf8) == "key\n")

        let fifo = folder.file("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        do {
            try DurableFile.append(Data("x".utf8), to: fifo)
            Issue.record("a FIFO was written to")
        } catch {
            #expect(error.description.contains(fifo), "\(error)")
        }
    }
}
