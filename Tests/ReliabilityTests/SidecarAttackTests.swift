#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeFixtures
import TestSupport
import Testing

/// Case 20: the adversarial pass of issue 41 against sidecars and the catalogue; each
/// failed on the code before its fix.
@Suite("fault: hostile sidecars and catalogue paths", .serialized, .timeLimit(.minutes(5)))
struct SidecarAttackTests {
    /// A session of two shots into `photos`, with a catalogue beside them.
    static func shoot(_ folder: TemporaryDirectory, shots: Int = 2) async throws -> String {
        let config = try writeConfig("""
        version: 1
        session: sidecars
        backend: {type: file-stub, width: 160, height: 120}
        triggers: [{type: stdin}]
        sinks: [{type: files, directory: \(folder.file("photos")), filename: "{session}-{seq:04}.{ext}"}]
        """, in: folder)
        let run = try await shutterpipe(["run", "--config", config], input: String(repeating: "capture\n", count: shots), in: folder.path)
        #expect(run.status == 0, "\(run.stderr)")
        return config
    }

    /// Whether Python's XML parser (expat: strict, as every editor's) reads `path`.
    static func wellFormed(_ path: String) async throws -> Bool {
        try await runProgram(["/usr/bin/python3", "-c", "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])", path]).status == 0
    }

    @Test("keywords with control characters and quotes: the sidecar stays well-formed XML, and a keyword written like an attribute (x' xmp:Rating='5 …) forges no rating, label or pick at `shots rebuild`")
    func keywordsCannotForgeMarks() async throws {
        let folder = TemporaryDirectory("chaos-keywords")
        let config = try await Self.shoot(folder)
        let forged = "x' xmp:Rating='5' xmp:Label='Red' shutterpipe:Pick='1' y=\"2"
        let added = try await shutterpipe(["shots", "keyword", "1", forged, "bell\u{7}and\u{1B}[31mescape", "nul-free\u{FFFE}", "--config", config], in: folder.path)
        #expect(added.status == 0, "\(added.stdout) \(added.stderr)")
        let rated = try await shutterpipe(["shots", "rate", "2", "2", "--config", config], in: folder.path)
        #expect(rated.status == 0, "\(rated.stderr)")
        let sidecar = folder.file("photos/sidecars-0001.jpg.xmp")
        #expect(try await Self.wellFormed(sidecar), "\((try? String(contentsOfFile: sidecar, encoding: .utf8)) ?? "")")
        let rebuilt = try await shutterpipe(["shots", "rebuild", folder.file("photos"), "--config", config], in: folder.path)
        #expect(rebuilt.status == 0, "\(rebuilt.stderr)")
        let listed = try await shutterpipe(["shots", "--json", "--config", config], in: folder.path)
        let shots = (try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]]) ?? []
        let first = shots.first { ($0["files"] as? [[String: Any]])?.contains { ($0["path"] as? String)?.hasSuffix("sidecars-0001.jpg") == true } == true }
        #expect(first?["rating"] as? Int == 0 && first?["label"] == nil && first?["pick"] as? Int == 0, "\(first ?? [:])")
        #expect((first?["keywords"] as? [String])?.contains(forged) == true, "the keyword itself is kept: \(first?["keywords"] ?? "")")
        let second = shots.first { ($0["files"] as? [[String: Any]])?.contains { ($0["path"] as? String)?.hasSuffix("sidecars-0002.jpg") == true } == true }
        #expect(second?["rating"] as? Int == 2, "a real rating is read back: \(second ?? [:])")
    }

    @Test("a 3 GB sparse sidecar, a sidecar that is a FIFO and one linked to a private file: `shots rebuild` and every start refuse each by name and go on; the photos are catalogued without their marks")
    func hostileSidecarFiles() async throws {
        let folder = TemporaryDirectory("chaos-sidecar-files")
        let config = try await Self.shoot(folder, shots: 1)
        let photos = folder.file("photos")
        // Photos the catalogue does not know yet, each with a hostile sidecar.
        for name in ["sparse", "pipe", "linked"] {
            try SyntheticJPEG.make(width: 64, height: 48, shot: 5).writeTestFile("\(photos)/\(name).jpg")
        }
        let sparse = open("\(photos)/sparse.jpg.xmp", O_WRONLY | O_CREAT | O_EXCL, 0o644)
        #expect(sparse >= 0 && ftruncate(sparse, 3_000_000_000) == 0)
        close(sparse)
        #expect(mkfifo("\(photos)/pipe.jpg.xmp", 0o644) == 0)
        try "<x:xmpmeta xmlns:x='adobe:ns:meta/'/>".writeTestFile(folder.file("private.xmp"))
        #expect(symlink(folder.file("private.xmp"), "\(photos)/linked.jpg.xmp") == 0)
        let session = try await RunningProcess.start(["run", "--config", config, "--no-status"], in: folder.path)
        session.send("capture\n")
        await session.waitForOutput(on: .stdout, "the shot's answer") { $0.contains("photoSuccess") }
        session.closeInput()
        let started = await session.wait(timeout: .seconds(60))
        #expect(started.status == 0, "\(started.stderr)")
        for name in ["sparse", "pipe", "linked"] {
            #expect(started.stderr.contains("refused the sidecar '\("\(photos)/\(name).jpg.xmp")'"), "\(name): \(started.stderr)")
        }
        #expect(started.stderr.contains("over the limit of 16.8 MB") && started.stderr.contains("it is a FIFO") && started.stderr.contains("symbolic link"))
        let rebuilt = try await shutterpipe(["shots", "rebuild", photos, "--config", config], in: folder.path, timeout: .seconds(120))
        #expect(rebuilt.status == 0 && count("refused the sidecar", in: rebuilt.stderr) == 3, "\(rebuilt.stdout) \(rebuilt.stderr)")
        #expect(rebuilt.stdout.contains("5 shot(s)"), "\(rebuilt.stdout)")
    }

    @Test("a catalogue path that is a symbolic link to another database is refused with the fix; that database is untouched, and every shot is answered")
    func linkedCatalogue() async throws {
        let folder = TemporaryDirectory("chaos-linked-catalogue")
        let other = folder.file("accounts.sqlite")
        let made = try await runProgram(["/usr/bin/python3", "-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('create table accounts (name text)'); c.commit()", other])
        try #require(made.status == 0, "\(made.errors)")
        let before = try Data(contentsOf: URL(fileURLWithPath: other))
        try FileManager.default.createDirectory(atPath: folder.file("photos/.shutterpipe"), withIntermediateDirectories: true)
        #expect(symlink(other, folder.file("photos/.shutterpipe/catalogue.sqlite")) == 0)
        let config = try writeConfig("""
        version: 1
        session: linked
        backend: {type: file-stub, width: 160, height: 120}
        triggers: [{type: stdin}]
        sinks: [{type: files, directory: \(folder.file("photos"))}]
        """, in: folder)
        let run = try await shutterpipe(["run", "--config", config], input: "capture\ncapture\n", in: folder.path)
        #expect(run.status == 0 && run.lines.prefix(2).allSatisfy { $0.hasPrefix("photoSuccess") }, "\(run.stdout) \(run.stderr)")
        #expect(run.stderr.contains("it is a symbolic link, and is never followed or written through"), "\(run.stderr)")
        #expect(run.stderr.contains("remove it (a new catalogue is made from the photos)"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: other)) == before, "the linked database was written")
        let listed = try await shutterpipe(["shots", "--config", config], in: folder.path)
        #expect(listed.status != 0 && listed.stderr.contains("symbolic link"), "\(listed.stdout) \(listed.stderr)")
    }
}
