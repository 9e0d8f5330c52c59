#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeKit
import TestSupport
import Testing

/// The stored photos of a session, by name, with their bytes (bookkeeping left out).
func storedPhotos(_ folder: String) -> [String: Data] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    var found: [String: Data] = [:]
    for name in names where !name.hasPrefix(".") { found[name] = FileManager.default.contents(atPath: "\(folder)/\(name)") }
    return found
}

/// Sends `capture` lines one at a time, each after the answer to the one before.
func shootOneByOne(_ session: RunningProcess, _ count: Int, from first: Int = 1) async {
    for number in first..<(first + count) {
        session.send("capture\n")
        await session.waitForOutput(on: .stdout, "answer \(number)") { $0.split(separator: "\n").filter { $0.hasPrefix("photo") }.count >= number }
    }
}

@Suite("upload sink: rclone to servers started on loopback (rclone serve sftp/webdav)", .timeLimit(.minutes(4)))
struct UploadSinkTests {
    func config(_ folder: TemporaryDirectory, backend: String = "{type: file-stub, width: 320, height: 240}", uploads: [String]) throws -> String {
        try writeConfig("""
        version: 1
        session: up
        backend: \(backend)
        triggers: [{type: stdin}]
        sinks:
          - {type: files, directory: \(folder.file("out")), filename: "{session}-{seq:04}.{ext}"}
        \(uploads.map { "  - {type: upload, queueFolder: \(folder.file("queue")), \($0)}" }.joined(separator: "\n"))
        """, in: folder)
    }

    @Test("shots fed one at a time reach an SFTP and a WebDAV server, each file once and byte for byte the stored one; JPEG only where asked")
    func sftpAndWebDAV() async throws {
        let (sftp, webdav) = (try await RcloneServer(.sftp, "both"), try await RcloneServer(.webdav, "both"))
        let folder = TemporaryDirectory("upload-both")
        let config = try config(folder, backend: "{type: file-stub, directory: \(repositoryRoot)/Plugins/FileStub/Tests/Fixtures}",
                                uploads: ["remote: \"\(sftp.remote("shots/{session}"))\"", "remote: \"\(webdav.remote("jpeg"))\", files: jpeg"])
        let session = try await RunningProcess.start(["run", "--config", config, "--no-status"], in: folder.path)
        await shootOneByOne(session, 4)
        let stored = storedPhotos(folder.file("out"))
        #expect(stored.count == 6, "\(stored.keys.sorted())")  // IMG_0001.JPG, IMG_0002.CR2+JPG, twice
        let jpegs = stored.filter { $0.key.hasSuffix(".jpg") }
        #expect(await eventually { sftp.files() == Dictionary(uniqueKeysWithValues: stored.map { ("shots/up/\($0.key)", $0.value) }) }, "\(sftp.files().keys.sorted())")
        #expect(await eventually { webdav.files() == Dictionary(uniqueKeysWithValues: jpegs.map { ("jpeg/\($0.key)", $0.value) }) }, "\(webdav.files().keys.sorted())")
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(60))
        #expect(outcome.status == 0 && !outcome.stderr.contains("still queued") && !outcome.stderr.contains("warning"), "\(outcome.stderr)")
        // The catalogue knows where each file went: the JPEGs to both servers, the RAWs to SFTP.
        let listed = try await shutterpipe(["shots", "--config", config, "--json"], in: folder.path)
        let files = (try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]] ?? []).flatMap { $0["files"] as? [[String: Any]] ?? [] }
        let copies = files.map { file in ((file["path"] as? String ?? "").hasSuffix(".jpg"), (file["copies"] as? [[String: Any]] ?? []).compactMap { $0["destination"] as? String }) }
        #expect(copies.count == 6 && copies.allSatisfy { jpeg, destinations in
            destinations.count == (jpeg ? 2 : 1) && destinations.allSatisfy { $0.hasPrefix(":sftp,") || $0.hasPrefix(":webdav,") } && !destinations.joined().contains(sftp.obscured)
        }, "\(copies)")
    }

    @Test("the SFTP server killed in the middle of an upload and started again: the shots were answered meanwhile, and every file arrives once, whole")
    func serverKilledMidUpload() async throws {
        let sftp = try await RcloneServer(.sftp, "cut")
        let folder = TemporaryDirectory("upload-cut")
        // ~600 KB shots at 512 KiB/s: each upload takes a second or so, long enough to be cut.
        let config = try config(folder, backend: "{type: file-stub, width: 1400, height: 1050, detail: 40}",
                                uploads: ["remote: \"\(sftp.remote("shots"))\", bandwidth: 512k"])
        let session = try await RunningProcess.start(["run", "--config", config, "--no-status"], in: folder.path)
        await shootOneByOne(session, 3)
        let stored = storedPhotos(folder.file("out"))
        #expect(stored.count == 3 && stored.values.allSatisfy { $0.count > 300_000 }, "\(stored.mapValues(\.count))")
        // Mid-upload: a file on the server, shorter than the photo.
        #expect(await eventually { sftp.files().contains { name, data in data.count > 0 && data.count < (stored[(name as NSString).lastPathComponent]?.count ?? 0) } },
                "\(sftp.files().mapValues(\.count))")
        await sftp.kill()
        await session.waitForOutput("wait and go on by themselves")
        await shootOneByOne(session, 1, from: 4)  // shots go on while the server is down
        try await sftp.start()
        let all = storedPhotos(folder.file("out"))
        #expect(all.count == 4)
        #expect(await eventually(timeout: .seconds(90)) { sftp.files() == Dictionary(uniqueKeysWithValues: all.map { ("shots/\($0.key)", $0.value) }) },
                "\(sftp.files().mapValues(\.count))")
        await session.waitForOutput("works again")
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(60))
        #expect(outcome.status == 0 && !outcome.stderr.contains(sftp.obscured), "the remote's password stays out of the log: \(outcome.stderr)")
    }

    @Test("50 shots queued while the server is down, the session killed with -9, the server up, the session started again: all 50 arrive, once")
    func fiftyQueuedAcrossAKill() async throws {
        let sftp = try await RcloneServer(.sftp, "fifty")
        await sftp.kill()
        let folder = TemporaryDirectory("upload-fifty")
        let config = try config(folder, backend: "{type: file-stub, width: 64, height: 48}", uploads: ["remote: \"\(sftp.remote("shots"))\""])
        var session = try await RunningProcess.start(["run", "--config", config, "--no-status"], in: folder.path)
        await shootOneByOne(session, 50)
        session.signal(SIGKILL)
        _ = await session.wait(timeout: .seconds(30))
        let stored = storedPhotos(folder.file("out"))
        #expect(stored.count == 50 && sftp.files().isEmpty)

        try await sftp.start()
        session = try await RunningProcess.start(["run", "--config", config, "--no-status"], in: folder.path)
        await session.waitForOutput("left queued by an earlier run")
        // Whole: a file being written has its name on the server before its bytes.
        let expected = Dictionary(uniqueKeysWithValues: stored.map { ("shots/\($0.key)", $0.value) })
        #expect(await eventually(timeout: .seconds(120)) { sftp.files() == expected }, "\(sftp.files().count) of 50")
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(60))
        #expect(outcome.status == 0 && !outcome.stderr.contains("still queued"), "\(outcome.stderr)")
    }

    @Test("minRating 4: nothing goes at the shot; rated 4 from the command line, that shot's file goes, once, even rated again; one rated 2 stays")
    func ratedOnly() async throws {
        let sftp = try await RcloneServer(.sftp, "rated")
        let folder = TemporaryDirectory("upload-rated")
        let socket = folder.file("s.sock")
        let config = try writeConfig("""
        version: 1
        session: up
        backend: {type: file-stub, width: 320, height: 240}
        triggers: [{type: stdin}, {type: socket, path: \(socket)}]
        catalogue: {marksInJPEG: false}  # the JPEG uploaded at rating 4 stays the stored one byte for byte
        sinks:
          - {type: files, directory: \(folder.file("out")), filename: "{session}-{seq:04}.{ext}"}
          - {type: upload, queueFolder: \(folder.file("queue")), remote: "\(sftp.remote("picks"))", minRating: 4}
        """, in: folder)
        let session = try await RunningProcess.start(["run", "--config", config, "--no-status", "--verbose"], in: folder.path)
        await shootOneByOne(session, 3)
        await session.waitForOutput("3 shots recorded") { shotsRecorded(in: $0) >= 3 }
        for (shot, rating) in [(2, 4), (3, 2), (2, 5)] {
            let rated = try await shutterpipe(["shots", "rate", String(shot), String(rating), "--socket", socket], in: folder.path)
            #expect(rated.status == 0, "\(rated.stdout) \(rated.stderr)")
        }
        let second = try #require(storedPhotos(folder.file("out"))["up-0002.jpg"])
        #expect(await eventually { sftp.files() == ["picks/up-0002.jpg": second] }, "\(sftp.files().keys.sorted())")
        session.signal(SIGTERM)
        let outcome = await session.wait(timeout: .seconds(60))
        #expect(outcome.status == 0 && count("queued for upload", in: outcome.stderr) == 1, "\(outcome.stderr)")
        #expect(sftp.files().keys.sorted() == ["picks/up-0002.jpg"])
    }

    @Test("a fresh account (no ~/.local/state yet) and no queueFolder: the queue goes in ~/.local/state/shutterpipe/uploads, made as it is needed, and the shot is uploaded")
    func freshAccount() async throws {
        let sftp = try await RcloneServer(.sftp, "fresh")
        let folder = TemporaryDirectory("upload-fresh")
        let home = TemporaryDirectory("upload-fresh-home")
        let config = try writeConfig("""
        version: 1
        session: up
        backend: {type: file-stub, width: 64, height: 48}
        triggers: [{type: stdin}]
        sinks:
          - {type: files, directory: \(folder.file("out"))}
          - {type: upload, remote: "\(sftp.remote("shots"))"}
        """, in: folder)
        let session = try await RunningProcess.start(["run", "--config", config, "--no-status"], in: folder.path, environment: ["HOME": home.path, "XDG_STATE_HOME": ""])
        await shootOneByOne(session, 1)
        #expect(await eventually { sftp.files().count == 1 }, "\(session.stderrSoFar)")
        session.closeInput()
        #expect(await session.wait(timeout: .seconds(60)).status == 0)
        #expect(home.names(".local/state/shutterpipe/uploads").contains("queue-up-upload.txt"), "\(home.names(".local/state/shutterpipe/uploads"))")
    }

    @Test("mistakes are named with the config's line and column: no remote, a remote without a colon, an unknown 'files'; a missing rclone stops the start with the fix")
    func configMistakes() async throws {
        let folder = TemporaryDirectory("upload-mistakes")
        for (upload, message) in [("files: all", "an upload sink needs 'remote'"), ("remote: shots", "has no ':'"), ("remote: \"s:x\", files: png", "files")] {
            let config = try config(folder, uploads: [upload])
            let outcome = try await shutterpipe(["validate", config], in: folder.path)
            #expect(outcome.status != 0 && outcome.stderr.contains("studio.yaml:7:") && outcome.stderr.contains(message), "\(upload): \(outcome.stderr)")
        }
        let config = try config(folder, uploads: ["remote: \"s:x\", rclone: /nonexistent/rclone"])
        let session = try await RunningProcess.start(["run", "--config", config, "--no-status"], in: folder.path)
        let outcome = await session.wait(timeout: .seconds(60))
        #expect(outcome.status != 0 && outcome.stderr.contains("cannot run '/nonexistent/rclone'") && outcome.stderr.contains("apt install rclone"), "\(outcome.stderr)")
    }
}
