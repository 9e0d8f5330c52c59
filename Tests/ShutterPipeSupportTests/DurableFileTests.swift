#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeSupport
import TestSupport
import Testing

/// Each durable write fsyncs, so the tests make them off the cooperative pool.
@Suite("Support: durable writes of a plugin's own files")
struct DurableFileTests {
    @Test("replace writes the whole file with its mode and leaves no temporary file; over a link it replaces the link, never what it points at")
    func replace() async throws {
        let folder = TemporaryDirectory("durable-replace")
        let path = folder.file("ledger.json")
        try await offThePool { try DurableFile.replace(path, with: Data("first".utf8), mode: 0o640) }
        try await offThePool { try DurableFile.replace(path, with: Data("second, longer".utf8), mode: 0o640) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "second, longer")
        #expect((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) == 0o640)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["ledger.json"], "no temporary file left")

        let secret = folder.file("secret")
        try Data("private".utf8).writeTestFile(secret)
        let linked = folder.file("linked.json")
        try FileManager.default.createSymbolicLink(atPath: linked, withDestinationPath: secret)
        try await offThePool { try DurableFile.replace(linked, with: Data("mine".utf8)) }
        #expect(try String(contentsOfFile: secret, encoding: .utf8) == "private", "the link's target is untouched")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: linked)) == nil, "the link itself was replaced by a file")
        #expect(try String(contentsOfFile: linked, encoding: .utf8) == "mine")
    }

    @Test("create makes a new file in a held folder and never replaces one: a taken name, a link at the name, and the folder renamed meanwhile")
    func create() async throws {
        let folder = TemporaryDirectory("durable-create")
        let descriptor = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        #expect(try await offThePool { try DurableFile.create(Data("first".utf8), named: Array("a.jpg".utf8), in: descriptor, mode: 0o640) })
        #expect(try String(contentsOfFile: folder.file("a.jpg"), encoding: .utf8) == "first")
        #expect((try FileManager.default.attributesOfItem(atPath: folder.file("a.jpg"))[.posixPermissions] as? Int) == 0o640)
        let again = try await offThePool { try DurableFile.create(Data("second".utf8), named: Array("a.jpg".utf8), in: descriptor, mode: 0o640) }
        #expect(!again, "a taken name is refused")
        #expect(try String(contentsOfFile: folder.file("a.jpg"), encoding: .utf8) == "first", "never replaced")
        // A link at the name is a taken name: what it points at is never written.
        let secret = folder.file("secret")
        try Data("private".utf8).writeTestFile(secret)
        try FileManager.default.createSymbolicLink(atPath: folder.file("b.jpg"), withDestinationPath: secret)
        let linked = try await offThePool { try DurableFile.create(Data("mine".utf8), named: Array("b.jpg".utf8), in: descriptor, mode: 0o600) }
        #expect(!linked)
        #expect(try String(contentsOfFile: secret, encoding: .utf8) == "private")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["a.jpg", "b.jpg", "secret"], "no temporary file left")
        // The folder renamed after it was opened: the file lands in the folder held, not at its old path.
        let moved = folder.path + "-moved"
        #expect(rename(folder.path, moved) == 0)
        defer { rename(moved, folder.path) }
        #expect(try await offThePool { try DurableFile.create(Data("third".utf8), named: Array("c.jpg".utf8), in: descriptor, mode: 0o600) })
        #expect(try String(contentsOfFile: moved + "/c.jpg", encoding: .utf8) == "third")
    }

    @Test("write(toNewFile:) writes chunks of any size and slices of larger buffers whole and in order, the disk started on each MiB; on a pipe, where no writeback can start, too")
    func writeToNewFile() async throws {
        let folder = TemporaryDirectory("durable-write")
        // A 40-byte header, a 3.5 MiB body cut from the middle of a larger buffer (its
        // indices do not start at 0), an empty chunk and a 1 MiB + 1 byte tail.
        let header = Data((0..<40).map { UInt8($0) })
        let larger = Data((0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        let body = larger[(256 << 10)..<((256 << 10) + (7 << 19))]
        let tail = Data(repeating: 0xAB, count: (1 << 20) + 1)
        let path = folder.file("photo.jpg")
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        try #require(descriptor >= 0)
        try await offThePool { try DurableFile.write([header, body, Data(), tail], toNewFile: descriptor) }
        #expect(try await offThePool { fsync(descriptor) } == 0)
        close(descriptor)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == header + body + tail)

        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let writeEnd = ends[1]
        try await offThePool { try DurableFile.write([header], toNewFile: writeEnd) }
        close(ends[1])
        #expect(try DescriptorIO.readAll(from: ends[0]) == header)
        close(ends[0])
    }

    @Test("append adds and creates, never through a link, and refuses a FIFO at once (no reader to wait for); each failure names the file")
    func append() async throws {
        let folder = TemporaryDirectory("durable-append")
        let path = folder.file("journal")
        try await offThePool { try DurableFile.append(Data("a\n".utf8), to: path) }
        try await offThePool { try DurableFile.append(Data("b\n".utf8), to: path) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "a\nb\n")

        let secret = folder.file("authorized_keys")
        try Data("key\n".utf8).writeTestFile(secret)
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
