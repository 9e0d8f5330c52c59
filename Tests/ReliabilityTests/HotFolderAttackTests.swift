#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeFixtures
import ShutterPipeSupport
import TestSupport
import Testing

/// Who writes the hot folder in an attack: whoever holds the FTP account a Wi-Fi camera
/// uploads with.
enum HotFolderWriter: String, Sendable, CustomTestStringConvertible {
    /// The session's own user (no root needed): the mechanics of every refusal.
    case sessionUser
    /// A second user who owns the folder (0755), as an FTP server's account does.
    case folderOwner
    /// A second user who writes a shared folder (1777) that the session's user owns.
    case sharedWriter

    var testDescription: String {
        switch self {
        case .sessionUser: "written by the session's own user"
        case .folderOwner: "written by a second user who owns the folder"
        case .sharedWriter: "written by a second user in a shared folder it does not own"
        }
    }
}

/// One attack's stage: a hot folder, a private folder of the session's user beside it
/// (with a secret and an `authorized_keys`), and the attacker, who acts through a small
/// Python program run as its user. Names are passed as hex, so any bytes can be a name.
struct HotFolderStage {
    let folder: TemporaryDirectory
    let writer: HotFolderWriter
    let other: OtherUser?
    var incoming: String { folder.file("in") }
    var secret: String { folder.file("private/secret") }
    static let secretText = "TOP-SECRET-0123456789"

    static func make(_ label: String, _ writer: HotFolderWriter) async throws -> HotFolderStage {
        let folder = TemporaryDirectory(label)
        let other = writer == .sessionUser ? nil : try await OtherUser.make()
        try FileManager.default.createDirectory(atPath: folder.file("in"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder.file("private"), withIntermediateDirectories: true)
        chmod(folder.path, 0o711)  // a second user may pass through to the hot folder
        chmod(folder.file("private"), 0o700)
        try secretText.write(toFile: folder.file("private/secret"), atomically: false, encoding: .utf8)
        chmod(folder.file("private/secret"), 0o600)
        try "ssh-ed25519 AAAAC3NzaOURS studio@ours\n".write(toFile: folder.file("private/authorized_keys"), atomically: false, encoding: .utf8)
        switch writer {
        case .sessionUser: break
        case .folderOwner:
            try other!.own(folder.file("in"))
            chmod(folder.file("in"), 0o755)
        case .sharedWriter:
            chmod(folder.file("in"), 0o1777)
        }
        return HotFolderStage(folder: folder, writer: writer, other: other)
    }

    /// The attacker's program: `OP HEXNAME [ARG]` in the hot folder.
    static let program = """
    import os, sys
    op, name = sys.argv[1], bytes.fromhex(sys.argv[2])
    os.chdir(sys.argv[3])
    if op == "write":
        data = sys.stdin.buffer.read()
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644); os.write(fd, data); os.close(fd)
    elif op == "link": os.symlink(sys.argv[4], name)
    elif op == "fifo": os.mkfifo(name, 0o644)
    elif op == "sparse":
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644); os.ftruncate(fd, int(sys.argv[4])); os.write(fd, b"\\xff\\xd8\\xff\\xe0"); os.close(fd)
    elif op == "rewrite":
        fd = os.open(name, os.O_WRONLY | os.O_APPEND); os.write(fd, b"ATTACKER"); os.close(fd)
    """

    /// The attacker does `op` on `name` (bytes) in `folder` (the hot folder by default).
    @discardableResult
    func attacker(_ op: String, _ name: [UInt8], _ argument: String? = nil, input: Data? = nil, in place: String? = nil) async throws -> ProgramOutput {
        let hex = name.map { String(format: "%02x", $0) }.joined()
        var arguments = ["/usr/bin/python3", "-c", Self.program, op, hex, place ?? incoming]
        if let argument { arguments.append(argument) }
        if let other { arguments = other.command(arguments) }
        return try await runProgram(arguments, environment: ["HOME": "/"], input: input ?? Data(), timeout: .seconds(60))
    }

    /// The attacker writes a real photo.
    func drop(_ name: String, shot: Int) async throws -> Data {
        let jpeg = SyntheticJPEG.make(width: 320, height: 240, shot: shot)
        let written = try await attacker("write", Array(name.utf8), input: jpeg)
        #expect(written.status == 0, "\(written.errors)")
        return jpeg
    }

    /// A hot-folder session writing into `out`, entered at start, with stdin.
    func session(originals: String = "leave", extra: String = "", sinks: String = "", catalogue: Bool = true) throws -> RunningProcess {
        let config = try writeConfig("""
        version: 1
        session: hot
        backend: {type: hotfolder, folder: \(incoming), originals: \(originals), settle: 3s\(extra)}
        triggers: [{type: stdin}]
        \(catalogue ? "" : "catalogue: off")
        sinks:
          - {type: files, directory: \(folder.file("out")), filename: "{seq:03}-{name}.{ext}"}
        \(sinks)
        coordinator: {enterAtStart: true}
        """, in: folder)
        return try RunningProcess(["run", "--config", config, "--no-status"], in: folder.path)
    }

    /// The stored photos' bytes, by name.
    var stored: [String: Data] {
        var found: [String: Data] = [:]
        for name in folder.names("out") where !name.hasPrefix(".") && !name.hasSuffix(".xmp") {
            found[name] = FileManager.default.contents(atPath: folder.file("out/\(name)"))
        }
        return found
    }

    /// Whether any stored file holds the secret.
    var secretLeaked: Bool {
        stored.values.contains { $0.range(of: Data(Self.secretText.utf8)) != nil }
    }

    static func end(_ session: RunningProcess) async -> Outcome {
        session.closeInput()
        return await session.wait(timeout: .seconds(60))
    }
}

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
        let session = try RunningProcess(["run", "--config", config, "--no-status"], in: folder.path)
        await session.waitForOutput("watching '\(incoming)'")
        let count = Chaos.count(ci: 10_000, full: 10_000)
        let jpeg = SyntheticJPEG.make(width: 16, height: 16, shot: 1)
        var names: [String] = []
        for index in 0..<count {
            let word = HotFolderAttacks.scriptWords[index % HotFolderAttacks.scriptWords.count]
            let name = index % 7 == 3 ? "\(word) (\(index)).JPG" : "\(word)_\(index).jpg"
            names.append(name)
            try jpeg.write(to: URL(fileURLWithPath: "\(incoming)/\(name)"))
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

/// The attacks, each for any writer.
enum HotFolderAttacks {
    static func linkToSecret(_ writer: HotFolderWriter) async throws {
        let stage = try await HotFolderStage.make("hot-link", writer)
        let linked = try await stage.attacker("link", Array("x.jpg".utf8), stage.secret)
        #expect(linked.status == 0, "\(linked.errors)")
        try await stage.attacker("link", Array("dir.jpg".utf8), stage.folder.file("private"))
        let session = try stage.session()
        await session.waitForOutput("watching '\(stage.incoming)'")
        let photo = try await stage.drop("real.jpg", shot: 1)
        await session.waitForOutput("the real photo stored") { count("→ photoSuccess", in: $0) >= 1 }
        let outcome = await HotFolderStage.end(session)
        #expect(outcome.stderr.contains("refused 'x.jpg' in '\(stage.incoming)': it is a symbolic link (never followed)"), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("refused 'dir.jpg'"), "\(outcome.stderr)")
        #expect(count("refused 'x.jpg'", in: outcome.stderr) == 1)
        #expect(!stage.secretLeaked)
        #expect(Array(stage.stored.values) == [photo], "\(stage.stored.keys.sorted())")
        #expect(count("taken from the hot folder", in: outcome.stderr) == 1)
    }

    static func ledgerLink(_ writer: HotFolderWriter) async throws {
        let stage = try await HotFolderStage.make("hot-ledger", writer)
        let keys = stage.folder.file("private/authorized_keys")
        let before = try String(contentsOfFile: keys, encoding: .utf8)
        let keyName = Array("x\nssh-ed25519 AAAAC3NzaATTACKER attacker@evil\ny.jpg".utf8)
        for (round, target) in [keys, stage.folder.file("private/made-by-us")].enumerated() {
            unlink("\(stage.incoming)/.shutterpipe-hotfolder-ingested")  // the last round's link
            let linked = try await stage.attacker("link", Array(".shutterpipe-hotfolder-ingested".utf8), target)
            #expect(linked.status == 0, "\(linked.errors)")
            let session = try stage.session()
            await session.waitForOutput("watching '\(stage.incoming)'")
            if round == 0 { _ = try await stage.attacker("write", keyName, input: SyntheticJPEG.make(width: 64, height: 48, shot: 9)) }
            _ = try await stage.drop("real-\(round).jpg", shot: round + 1)
            await session.waitForOutput("the real photo stored") { count("→ photoSuccess", in: $0) >= 1 }
            let outcome = await HotFolderStage.end(session)
            #expect(outcome.stderr.contains("the ledger '\(stage.incoming)/.shutterpipe-hotfolder-ingested' is refused: it is a symbolic link"), "\(outcome.stderr)")
            #expect(count("the ledger", in: outcome.stderr) == 1, "said once: \(outcome.stderr)")
            // Refused at once in the first round; there at the start of the second, and refused then.
            #expect(count("refused 'x\\nssh-ed25519 AAAAC3NzaATTACKER attacker@evil\\ny.jpg'", in: outcome.stderr) == 1, "\(outcome.stderr)")
            #expect(count("taken from the hot folder", in: outcome.stderr) == 1, "\(outcome.stderr)")
        }
        #expect(try String(contentsOfFile: keys, encoding: .utf8) == before, "authorized_keys was written")
        #expect(!FileManager.default.fileExists(atPath: stage.folder.file("private/made-by-us")), "the link's target was made")
    }

    static func moveAcrossFileSystems(_ writer: HotFolderWriter) async throws {
        let stage = try await HotFolderStage.make("hot-move", writer)
        let done = TemporaryDirectory("hot-move-done", inMemory: true)
        var here = stat(), there = stat()
        try #require(stat(stage.incoming, &here) == 0 && stat(done.path, &there) == 0)
        try #require(here.st_dev != there.st_dev, "the done folder must be on another file system (tmpfs at /dev/shm) for this case")
        let photo = try await stage.drop("a.jpg", shot: 1)
        try await stage.attacker("link", Array("b.jpg".utf8), stage.secret)
        let session = try stage.session(originals: "move", extra: ", doneFolder: \(done.file("done"))")
        await session.waitForOutput("watching '\(stage.incoming)'")
        await session.waitForOutput("a.jpg moved") { _ in FileManager.default.fileExists(atPath: done.file("done/a.jpg")) }
        let outcome = await HotFolderStage.end(session)
        #expect(outcome.stderr.contains("refused 'b.jpg'"), "\(outcome.stderr)")
        #expect(done.names("done") == ["a.jpg"], "\(done.names("done"))")
        #expect(FileManager.default.contents(atPath: done.file("done/a.jpg")) == photo)
        #expect(!FileManager.default.fileExists(atPath: "\(stage.incoming)/a.jpg"), "the original is removed once moved")
        var moved = stat()
        #expect(stat(done.file("done/a.jpg"), &moved) == 0 && moved.st_uid == geteuid() && moved.st_mode & 0o022 == 0)
        #expect(!stage.secretLeaked)
        if writer != .sessionUser {
            let rewrite = try await stage.attacker("rewrite", Array("a.jpg".utf8), in: done.file("done"))
            #expect(rewrite.status != 0, "the writer could rewrite the moved file")
            #expect(FileManager.default.contents(atPath: done.file("done/a.jpg")) == photo)
        }
    }

    static func linkedDoneFolder(_ writer: HotFolderWriter) async throws {
        let stage = try await HotFolderStage.make("hot-done-link", writer)
        let inbox = stage.folder.file("private/inbox")
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        try await stage.attacker("link", Array("ingested".utf8), inbox)
        _ = try await stage.drop("a.jpg", shot: 1)
        let refused = try stage.session(originals: "move")
        await refused.waitForOutput("the done folder '\(stage.incoming)/ingested' is a symbolic link")
        let outcome = await HotFolderStage.end(refused)
        #expect(outcome.stderr.contains("remove '\(stage.incoming)/ingested'"), "\(outcome.stderr)")
        #expect(stage.folder.names("private/inbox").isEmpty)
        #expect(stage.stored.isEmpty)

        // The link removed: the session makes the folder, and a file the writer owns is
        // copied in as the session's, not linked (the writer could still rewrite a link).
        if writer == .sessionUser { unlink("\(stage.incoming)/ingested") } else {
            _ = try await runProgram(stage.other!.command(["/bin/rm", "-f", "\(stage.incoming)/ingested"]))
        }
        let session = try stage.session(originals: "move")
        await session.waitForOutput("a.jpg moved") { _ in FileManager.default.fileExists(atPath: "\(stage.incoming)/ingested/a.jpg") }
        _ = await HotFolderStage.end(session)
        var moved = stat()
        #expect(lstat("\(stage.incoming)/ingested/a.jpg", &moved) == 0 && moved.st_uid == geteuid() && moved.st_nlink == 1)
        #expect(stage.folder.names("private/inbox").isEmpty)
        if writer != .sessionUser {
            let rewrite = try await stage.attacker("rewrite", Array("a.jpg".utf8), in: "\(stage.incoming)/ingested")
            #expect(rewrite.status != 0, "the writer could rewrite the moved file")
        }
    }

    static func sparseAndHuge(_ writer: HotFolderWriter) async throws {
        let stage = try await HotFolderStage.make("hot-sparse", writer)
        let session = try stage.session()
        await session.waitForOutput("watching '\(stage.incoming)'")
        for index in 1...4 { try await stage.attacker("sparse", Array("gib-\(index).jpg".utf8), String(1 << 30)) }
        try await stage.attacker("sparse", Array("holes.jpg".utf8), String(300_000_000))
        try await stage.attacker("sparse", Array("huge.jpg".utf8), String(40_000_000_000))
        let photo = try await stage.drop("real.jpg", shot: 1)
        await session.waitForOutput("the real photo stored") { count("→ photoSuccess", in: $0) >= 1 }
        await session.waitForOutput("every file refused") { count("refused '", in: $0) >= 6 }
        let peak = peakMemory(session.pid)
        let outcome = await HotFolderStage.end(session)
        for index in 1...4 { #expect(outcome.stderr.contains("refused 'gib-\(index).jpg'") && outcome.stderr.contains("over the limit of 500.0 MB"), "\(outcome.stderr)") }
        #expect(outcome.stderr.contains("refused 'huge.jpg'") && outcome.stderr.contains("40.0 GB"), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("refused 'holes.jpg'") && outcome.stderr.contains("it is sparse"), "\(outcome.stderr)")
        #expect(Array(stage.stored.values) == [photo])
        // Nothing of the 44 GB was read: the session stays at its own size (about 30 MB).
        #expect(peak.map { $0 < 200_000_000 } == true, "peak memory \(peak.map(formatBytes) ?? "?")")
    }

    static func memoryBudget(_ writer: HotFolderWriter) async throws {
        let stage = try await HotFolderStage.make("hot-budget", writer)
        let gate = stage.folder.file("gate")
        // The sinks hold every photo until the test makes the gate file.
        let hold = "  - {type: command, command: [/bin/sh, -c, 'while [ ! -e \(gate) ]; do sleep 0.05; done', hold], actions: [download], timeout: 300s}"
        let session = try stage.session(extra: ", maxBuffered: 1MB", sinks: hold, catalogue: false)
        await session.waitForOutput("watching '\(stage.incoming)'")
        var random = SeededRandom(seed: 41)
        for index in 1...4 {
            let bytes = Data((0..<700_000).map { _ in UInt8.random(in: 0...255, using: &random) })
            _ = try await stage.attacker("write", Array("r\(index).dng".utf8), input: bytes)
        }
        await session.waitForOutput("a file waits for room") { $0.contains("waits to be read") }
        #expect(count("taken from the hot folder", in: session.stderrSoFar) == 1, "\(session.stderrSoFar)")
        #expect(FileManager.default.createFile(atPath: gate, contents: Data()))
        await session.waitForOutput("every file stored") { count("→ photoSuccess", in: $0) >= 4 }
        let outcome = await HotFolderStage.end(session)
        #expect(count("taken from the hot folder", in: outcome.stderr) == 4, "\(outcome.stderr)")
        #expect(stage.stored.count == 4)
    }

    static func fifos(_ writer: HotFolderWriter) async throws {
        let stage = try await HotFolderStage.make("hot-fifo", writer)
        try await stage.attacker("fifo", Array(".shutterpipe-hotfolder-ingested".utf8))
        try await stage.attacker("fifo", Array("pipe.jpg".utf8))
        let session = try stage.session()
        await session.waitForOutput("watching '\(stage.incoming)'")
        for number in 1...3 {
            _ = try await stage.drop("real-\(number).jpg", shot: number)
            await session.waitForOutput("photo \(number) stored") { count("→ photoSuccess", in: $0) >= number }
        }
        session.signal(SIGTERM)
        let outcome = await session.wait(timeout: .seconds(20), for: "SIGTERM to end the session")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("the ledger '\(stage.incoming)/.shutterpipe-hotfolder-ingested' is refused: it is a FIFO"), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("refused 'pipe.jpg'") && outcome.stderr.contains("FIFO"), "\(outcome.stderr)")
        #expect(stage.stored.count == 3)
    }

    static func names(_ writer: HotFolderWriter) async throws {
        let stage = try await HotFolderStage.make("hot-names", writer)
        let newline = Array("two\nlines.jpg".utf8), latin1: [UInt8] = Array("caf".utf8) + [0xE9] + Array(".jpg".utf8)
        let combining = "\u{301}ORDER-7.jpg"
        let jpeg = SyntheticJPEG.make(width: 64, height: 48, shot: 3)
        try await stage.attacker("write", newline, input: jpeg)
        try await stage.attacker("write", latin1, input: jpeg)
        for round in 1...2 {
            let session = try stage.session()
            await session.waitForOutput("watching '\(stage.incoming)'")
            if round == 1 { _ = try await stage.drop(combining, shot: 1) }
            _ = try await stage.drop("plain-\(round).jpg", shot: 10 + round)
            await session.waitForOutput("taken") { count("→ photoSuccess", in: $0) >= (round == 1 ? 2 : 1) }
            let outcome = await HotFolderStage.end(session)
            #expect(count("refused 'two\\nlines.jpg'", in: outcome.stderr) == 1, "\(outcome.stderr)")
            #expect(count("refused 'caf\\xe9.jpg'", in: outcome.stderr) == 1, "\(outcome.stderr)")
            #expect(outcome.stderr.contains("not UTF-8") && outcome.stderr.contains("control character"))
        }
        let stored = stage.stored.keys.sorted()
        #expect(stored.count == 3 && stored.contains("001-\u{301}ORDER-7.jpg"), "\(stored)")
    }

    /// A word in each of 20 scripts, as cameras, phones and editors name files (NFD
    /// from a Mac, NFC elsewhere, a combining mark after a base letter).
    static let scriptWords = [
        "Café", "Cafe\u{301}", "Ελλάδα", "Москва", "Երևան", "ירושלים", "القاهرة", "दिल्ली", "ঢাকা", "กรุงเทพ",
        "თბილისი", "서울", "ひらがな", "カタカナ", "北京", "አዲስ", "சென்னை", "ភ្នំពេញ", "කොළඹ", "ལྷ་ས", "અમદાવાદ", "హైదరాబాద్", "Hà Nội", "Tiếng Việt",
    ]

    /// A process's peak resident memory (VmHWM), in bytes.
    static func peakMemory(_ pid: pid_t) -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        return line.split(separator: " ").dropFirst().first.flatMap { Int64($0) }.map { $0 * 1024 }
    }

    static func formatBytes(_ bytes: Int64) -> String { "\(bytes / 1_000_000) MB" }
}
