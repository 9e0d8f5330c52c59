#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeFixtures
import ShutterPipeSupport
import TestSupport
import Testing

/// Case 16: the adversarial pass of issue 41 against the hot folder. Each attack is run by
/// the session's own user here, and by a second user in ``HotFolderAttacksAsAnotherUserTests``;
/// each failed on the code before its fix.
@Suite("fault: attacks on the hot folder, by the session's own user", .timeLimit(.minutes(5)))
struct HotFolderAttackTests {
    @Test("a symbolic link to a private file is refused by name, never read, never stored; a photo beside it is taken")
    func linkToSecret() async throws { try await HotFolderAttacks.linkToSecret(.sessionUser) }

    @Test("the ledger linked to authorized_keys (there, or not yet), with a name holding a key line: neither file is written or made, the ledger is refused by name, the name is refused once")
    func ledgerLink() async throws { try await HotFolderAttacks.ledgerLink(.sessionUser) }

    @Test("originals: move across file systems never reads through a link, and the moved file is the session's own")
    func moveAcrossFileSystems() async throws { try await HotFolderAttacks.moveAcrossFileSystems(.sessionUser) }

    @Test("a done folder that is a link into a private folder is refused at the enter with the fix; nothing lands in the private folder")
    func linkedDoneFolder() async throws { try await HotFolderAttacks.linkedDoneFolder(.sessionUser) }

    @Test("sparse files of 1 GiB and a 40 GB one are refused by name, not read: the session's memory stays small; a photo beside them is taken")
    func sparseAndHuge() async throws { try await HotFolderAttacks.sparseAndHuge(.sessionUser) }

    @Test("files waiting in memory stay under maxBuffered: while the sinks hold the first, the next ones wait to be read, and all are taken once they are released")
    func memoryBudget() async throws { try await HotFolderAttacks.memoryBudget(.sessionUser) }

    @Test("a FIFO as the ledger and as a photo blocks nothing: both refused by name, photos answer, SIGTERM ends the session at once")
    func fifos() async throws { try await HotFolderAttacks.fifos(.sessionUser) }

    @Test("names with a line break or not UTF-8 are refused once each, and again once after a restart, never taken; a name that begins with a combining mark is taken")
    func names() async throws { try await HotFolderAttacks.names(.sessionUser) }

    @Test("nothing a well-behaved sender writes is refused: 10,000 ordinary files named in 21 scripts (NFC and NFD, spaces, brackets), dropped faster than inotify's queue holds, are each taken once")
    func ordinaryFiles() async throws {
        let folder = TemporaryDirectory("hot-ordinary", inMemory: true)
        let incoming = folder.file("in")
        try FileManager.default.createDirectory(atPath: incoming, withIntermediateDirectories: true)
        let config = try writeConfig("""
        version: 1
        session: ordinary
        backend: {type: hotfolder, folder: \(incoming), settle: 1s}
        triggers: [{type: stdin}]
        catalogue: off
        sinks: [{type: files, directory: \(folder.file("out")), filename: "{name}.{ext}"}]
        coordinator: {enterAtStart: true, queueLimit: 20000}
        """, in: folder)
        let session = try await RunningProcess.start(["run", "--config", config, "--no-status"], in: folder.path)
        await session.waitForOutput("watching '\(incoming)'")
        let count = Chaos.count(ci: 10_000, full: 10_000)
        let jpeg = SyntheticJPEG.make(width: 16, height: 16, shot: 1)
        // Written on a thread of its own: 10,000 writes would hold a cooperative thread.
        let names = try await offThePool { () throws -> [String] in
            var names: [String] = []
            for index in 0..<count {
                let word = HotFolderAttacks.scriptWords[index % HotFolderAttacks.scriptWords.count]
                let name = index % 7 == 3 ? "\(word) (\(index)).JPG" : "\(word)_\(index).jpg"
                names.append(name)
                try jpeg.writeTestFile("\(incoming)/\(name)")
            }
            return names
        }
        await session.waitForOutput("every file stored", timeout: .seconds(600)) { $0.components(separatedBy: "→ photoSuccess").count - 1 >= count }
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(120))
        #expect(outcome.status == 0)
        #expect(!outcome.stderr.contains("refused"), "\(outcome.stderr.split(separator: "\n").filter { $0.contains("refused") }.prefix(5))")
        #expect(outcome.stderr.components(separatedBy: "taken from the hot folder").count - 1 == count, "each taken once")
        let stored = Set(folder.names("out").filter { !$0.hasPrefix(".") }.map { $0.precomposedStringWithCanonicalMapping })
        let expected = Set(names.map { PathName.stem($0).precomposedStringWithCanonicalMapping + "." + PathName.fileExtension($0).lowercased() })
        #expect(stored == expected, "\(expected.subtracting(stored).prefix(5)) missing")
        Chaos.record("hot folder, ordinary names", ["files": count, "scripts": HotFolderAttacks.scriptWords.count])
    }
}

@Suite("fault: attacks on the hot folder, by a second user", .serialized, .timeLimit(.minutes(8)),
       .requiresRoot("the attacker is a second user (useradd, chown, setpriv)"))
struct HotFolderAttacksAsAnotherUserTests {
    static let writers: [HotFolderWriter] = [.folderOwner, .sharedWriter]

    @Test("a symbolic link to a private file", arguments: writers)
    func linkToSecret(_ writer: HotFolderWriter) async throws { try await HotFolderAttacks.linkToSecret(writer) }

    @Test("the ledger linked to authorized_keys", arguments: writers)
    func ledgerLink(_ writer: HotFolderWriter) async throws { try await HotFolderAttacks.ledgerLink(writer) }

    @Test("originals: move across file systems: never through a link; the copy is the session's, and the writer cannot rewrite it", arguments: writers)
    func moveAcrossFileSystems(_ writer: HotFolderWriter) async throws { try await HotFolderAttacks.moveAcrossFileSystems(writer) }

    @Test("a linked done folder; a file moved on one file system is the session's, not a hard link the writer can rewrite", arguments: writers)
    func linkedDoneFolder(_ writer: HotFolderWriter) async throws { try await HotFolderAttacks.linkedDoneFolder(writer) }

    @Test("sparse and huge files", arguments: writers)
    func sparseAndHuge(_ writer: HotFolderWriter) async throws { try await HotFolderAttacks.sparseAndHuge(writer) }

    @Test("FIFOs as the ledger and as a photo", arguments: writers)
    func fifos(_ writer: HotFolderWriter) async throws { try await HotFolderAttacks.fifos(writer) }

    @Test("names with a line break, not UTF-8, or a leading combining mark", arguments: writers)
    func names(_ writer: HotFolderWriter) async throws { try await HotFolderAttacks.names(writer) }
}
