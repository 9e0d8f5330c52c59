#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeFixtures
import ShutterPipeSupport
import TestSupport
import Testing

/// The attacks, each for any writer.
enum HotFolderAttacks {
    static func linkToSecret(_ writer: HotFolderWriter) async throws {
        let stage = try await HotFolderStage.make("hot-link", writer)
        let linked = try await stage.attacker("link", Array("x.jpg".utf8), stage.secret)
        #expect(linked.status == 0, "\(linked.errors)")
        try await stage.attacker("link", Array("dir.jpg".utf8), stage.folder.file("private"))
        let session = try await stage.session()
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
            let session = try await stage.session()
            await session.waitForOutput("watching '\(stage.incoming)'")
            if round == 0 { _ = try await stage.attacker("write", keyName, input: SyntheticJPEG.make(width: 64, height: 48, shot: 9)) }
            _ = try await stage.drop("real-\(round).jpg", shot: round + 1)
            await session.waitForOutput("the real photo stored") { count("→ photoSuccess", in: $0) >= 1 }
            let outcome = await HotFolderStage.end(session)
            #expect(outcome.stderr.contains("the ledger '\(stage.incoming)/.shutterpipe-hotfolder-ingested' is refused: it is a symbolic link"), "\(outcome.stderr)")
            #expect(count("the ledger", in: outcome.stderr) == 1, "said once: \(outcome.stderr)")
            // Refused at once in the first round; there at the start of the second, and refused then.
            #expect(count("refused 'x\\nssh-ed25519 AAAAC3NzaATTACKER attacker@evil\\ny.jpg'", in: outcome.stderr) == 1, "\(outcome.stderr)")
            // The second round may take the first's photo again: with the ledger refused,
            // nothing was recorded (said once, above).
            #expect(count("taken from the hot folder: real-\(round).jpg", in: outcome.stderr) == 1, "\(outcome.stderr)")
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
        let session = try await stage.session(originals: "move", extra: ", doneFolder: \(done.file("done"))")
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
        let refused = try await stage.session(originals: "move")
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
        let session = try await stage.session(originals: "move")
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
        let session = try await stage.session()
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
        let session = try await stage.session(extra: ", maxBuffered: 1MB", sinks: hold, catalogue: false)
        await session.waitForOutput("watching '\(stage.incoming)'")
        var random = SeededRandom(seed: 41)
        for index in 1...4 {
            let bytes = Data((0..<700_000).map { _ in UInt8.random(in: 0...255, using: &random) })
            _ = try await stage.attacker("write", Array("r\(index).dng".utf8), input: bytes)
        }
        await session.waitForOutput("a file waits for room") { $0.contains("waits to be read") }
        #expect(count("taken from the hot folder", in: session.stderrSoFar) == 1, "\(session.stderrSoFar)")
        try Data().writeTestFile(gate)
        await session.waitForOutput("every file stored") { count("→ photoSuccess", in: $0) >= 4 }
        let outcome = await HotFolderStage.end(session)
        #expect(count("taken from the hot folder", in: outcome.stderr) == 4, "\(outcome.stderr)")
        #expect(stage.stored.count == 4)
    }

    static func fifos(_ writer: HotFolderWriter) async throws {
        let stage = try await HotFolderStage.make("hot-fifo", writer)
        try await stage.attacker("fifo", Array(".shutterpipe-hotfolder-ingested".utf8))
        try await stage.attacker("fifo", Array("pipe.jpg".utf8))
        let session = try await stage.session()
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
            let session = try await stage.session()
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
