#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeFixtures
import ShutterPipeKit
import TestSupport
import Testing

/// A hot-folder session: the folder watched, a files sink, entered at start, stdin for
/// ending it (and for a capture it refuses).
func hotFolderSession(_ folder: TemporaryDirectory, watched: String, originals: String, settle: String = "3s") async throws -> RunningProcess {
    let config = try writeConfig("""
    version: 1
    session: hot
    backend: {type: hotfolder, folder: \(watched), originals: \(originals), settle: \(settle)}
    triggers: [{type: stdin}]
    sinks: [{type: files, directory: \(folder.file("out")), filename: "{session}-{seq:03}-{name}.{ext}"}]
    coordinator: {enterAtStart: true}
    """, in: folder)
    return try await RunningProcess.start(["run", "--config", config, "--no-status"], in: folder.path)
}

/// The stored photos, by name, with their bytes.
func storedPhotos(_ folder: TemporaryDirectory) -> [String: Data] {
    var found: [String: Data] = [:]
    for name in folder.names("out") where !name.hasPrefix(".") { found[name] = FileManager.default.contents(atPath: folder.file("out/\(name)")) }
    return found
}

@Suite("hotfolder backend: files other programs write, each taken once", .timeLimit(.minutes(3)))
struct HotFolderTests {
    @Test("a camera uploading over FTP (an FTP server, pyftpdlib, writing into the hot folder; curl as the client, slowly, in chunks), one file at a time: each is taken whole, once, and moved out once stored")
    func ftpUploads() async throws {
        let ftp = try await RcloneServer(.ftp, "hot")
        let folder = TemporaryDirectory("hot-ftp")
        let session = try await hotFolderSession(folder, watched: ftp.root.path, originals: "move")
        await session.waitForOutput("watching '\(ftp.root.path)'")
        var sent: [String: Data] = [:]
        for number in 1...3 {
            let name = "DSC_000\(number).JPG"
            let bytes = SyntheticJPEG.make(width: 800, height: 600, shot: number, detail: 30)
            try bytes.writeTestFile(folder.file(name))
            sent[name] = bytes
            // ~600 KB at 128 KiB/s: the server writes the file for about five seconds. curl
            // sends and is done; rclone would read the file back after the upload, find it
            // moved out of the hot folder, and send it again (README, Troubleshooting).
            let upload = try await runProgram(["curl", "-sS", "--limit-rate", "128k", "-T", folder.file(name),
                                               "--user", "\(RcloneServer.user):\(RcloneServer.password)", "ftp://127.0.0.1:\(ftp.port)/\(name)"],
                                              environment: ["HOME": folder.path], timeout: .seconds(60))
            #expect(upload.status == 0, "\(upload.text)")
            await session.waitForOutput("shot \(number) stored") { count("→ photoSuccess", in: $0) >= number }
        }
        let moved = sent.keys.sorted().map { "ingested/\($0)" }
        #expect(await eventually { ftp.files().keys.filter { !$0.hasPrefix(".") }.sorted() == moved }, "\(ftp.files().keys.sorted())")
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(60))
        #expect(outcome.status == 0 && count("taken from the hot folder", in: outcome.stderr) == 3, "\(outcome.stderr)")
        let stored = storedPhotos(folder)
        #expect(stored.count == 3 && Set(stored.values) == Set(sent.values), "\(stored.keys.sorted())")
    }

    @Test("temporary names wait for their rename, hidden and backup files are never taken, a capture is refused with the reason; after a restart nothing is taken twice, and a new file is")
    func namesAndRestart() async throws {
        let folder = TemporaryDirectory("hot-names")
        let watched = folder.file("in")
        try FileManager.default.createDirectory(atPath: watched, withIntermediateDirectories: true)
        var session = try await hotFolderSession(folder, watched: watched, originals: "leave")
        await session.waitForOutput("watching '\(watched)'")
        let jpeg = SyntheticJPEG.make(width: 320, height: 240, shot: 1)
        try jpeg.writeTestFile("\(watched)/IMG_1.JPG.part")
        try jpeg.writeTestFile("\(watched)/.IMG_2.JPG")
        try jpeg.writeTestFile("\(watched)/IMG_3.JPG~")
        #expect(rename("\(watched)/IMG_1.JPG.part", "\(watched)/IMG_1.JPG") == 0)
        await session.waitForOutput("taken from the hot folder: IMG_1.JPG")
        await session.waitForOutput("photoSuccess") { count("→ photoSuccess", in: $0) >= 1 }
        session.send("capture\n")
        await session.waitForOutput("photoFailed", on: .stdout)
        #expect(session.stdoutSoFar.hasPrefix("photoFailed invalidConfiguration: a hot folder takes no captures"), "\(session.stdoutSoFar)")
        session.closeInput()
        var outcome = await session.wait(timeout: .seconds(60))
        #expect(outcome.status != 0 || outcome.stderr.contains("taken from the hot folder: IMG_1.JPG"))
        #expect(count("taken from the hot folder", in: outcome.stderr) == 1, "\(outcome.stderr)")

        // Started again: IMG_1.JPG is still there (leave), recorded, not taken again.
        session = try await hotFolderSession(folder, watched: watched, originals: "leave")
        await session.waitForOutput("watching '\(watched)'")
        try SyntheticJPEG.make(width: 320, height: 240, shot: 4).writeTestFile("\(watched)/IMG_4.JPG")
        await session.waitForOutput("taken from the hot folder: IMG_4.JPG")
        await session.waitForOutput("photoSuccess") { count("→ photoSuccess", in: $0) >= 1 }
        session.closeInput()
        outcome = await session.wait(timeout: .seconds(60))
        #expect(count("taken from the hot folder", in: outcome.stderr) == 1, "\(outcome.stderr)")
        #expect(storedPhotos(folder).keys.sorted() == ["hot-001-IMG_1.jpg", "hot-002-IMG_4.jpg"])
        #expect(Set(folder.names("in")) == [".IMG_2.JPG", "IMG_1.JPG", "IMG_3.JPG~", "IMG_4.JPG", ".shutterpipe-hotfolder-ingested"])
    }

    @Test("beside a camera (backend: a list): captures go to the camera, files dropped into the folder come in between them, each finished by its own backend")
    func besideACamera() async throws {
        let folder = TemporaryDirectory("hot-beside")
        let watched = folder.file("in")
        try FileManager.default.createDirectory(atPath: watched, withIntermediateDirectories: true)
        let config = try writeConfig("""
        version: 1
        session: both
        backend:
          - {type: file-stub, width: 160, height: 120, camera: tethered}
          - {type: hotfolder, folder: \(watched), originals: move}
        triggers: [{type: stdin}]
        sinks: [{type: files, directory: \(folder.file("out")), filename: "{seq:03}-{camera}.{ext}"}]
        """, in: folder)
        let session = try await RunningProcess.start(["run", "--config", config, "--no-status"], in: folder.path)
        session.send("capture\n")
        await session.waitForOutput("photoSuccess", on: .stdout)
        await session.waitForOutput("watching '\(watched)'")
        try SyntheticJPEG.make(width: 320, height: 240, shot: 9).writeTestFile("\(watched)/WIFI_0001.JPG")
        await session.waitForOutput("the dropped file stored") { count("→ photoSuccess", in: $0) >= 2 }
        session.send("capture\n")
        await session.waitForOutput(on: .stdout, "the second capture") { count("photoSuccess", in: $0) >= 2 }
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(60))
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(storedPhotos(folder).keys.sorted() == ["001-tethered.jpg", "002-hotfolder.jpg", "003-tethered.jpg"], "\(outcome.stderr)")
        #expect(folder.names("in/ingested") == ["WIFI_0001.JPG"] && !folder.names("in").contains("WIFI_0001.JPG"), "moved by the hot folder once stored")
    }
}
