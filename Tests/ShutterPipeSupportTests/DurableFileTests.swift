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
