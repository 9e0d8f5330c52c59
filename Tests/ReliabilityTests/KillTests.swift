#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

/// Case 1: `kill -9` at random points of a burst, again and again, on one output folder.
@Suite("fault: kill -9 during a burst", .serialized)
struct KillDuringBurstTests {
    @Test("file-stub backend: no partial file, no leftover temporary file, no sequence number reused, every answered photo whole")
    func fileStub() async throws {
        let folder = TemporaryDirectory("chaos-kill")
        try writeLargeJPEGs(3, megabytes: 4, into: folder.file("card"))  // 4 MB, like a 12 MP camera JPEG: kills land mid-write
        let report = try await killLoop("kill -9, file-stub", kills: Chaos.count(ci: 20, full: 300), folder: folder,
                                        backend: "  type: file-stub\n  directory: \(folder.file("card"))")
        #expect(report.answered > 0)
    }

    @Test("virtual camera: the same, and every photo the camera took is on disk or still on the card")
    func virtualCamera() async throws {
        let folder = TemporaryDirectory("chaos-kill-camera")
        try writeLargeJPEGs(2, megabytes: 4, into: folder.file("card"))
        let camera = try await FakeCamera(["--verbose", "--images", folder.file("card")])
        let report = try await killLoop("kill -9, virtual camera", kills: Chaos.count(ci: 6, full: 100), folder: folder,
                                        backend: "  type: gphoto2\n  port: \(camera.portSpec)",
                                        environment: ["HOME": camera.home.path], burst: 2...8)
        let taken = camera.logText.components(separatedBy: "op 0x100e").count - 1  // InitiateCapture
        let onCard = try await camera.filesOnCard().count
        #expect(taken > 0)
        #expect(report.stored + onCard >= taken, "seed \(Chaos.seed): \(taken) taken, \(report.stored) on disk, \(onCard) on the card")
        Chaos.record("kill -9, virtual camera: photos", ["taken": taken, "onDisk": report.stored, "onCard": onCard])
    }

    struct Report { var answered = 0, stored = 0 }

    /// Runs `kills` sessions on one folder; each gets a burst and is killed at a random
    /// point. Checks the folder after every kill.
    func killLoop(_ name: String, kills: Int, folder: TemporaryDirectory, backend: String,
                  environment: [String: String] = [:], burst: ClosedRange<Int> = 5...40) async throws -> Report {
        var random = Chaos.random(name)
        let output = folder.file("out"), socket = folder.file("s.sock")
        let config = try socketConfig(backend: backend, socket: socket, output: output, in: folder)
        var answered: [String: Fingerprint] = [:]  // every file answered photoSuccess, as it was then
        var archived = 0
        var leftoversSeen = 0, killedMidWrite = 0, sent = 0
        let started = ContinuousClock.now
        for round in 1...kills {
            let session = try await SocketSession.start(config, socket: socket, in: folder, environment: environment)
            // Leftovers of the previous kill are gone once the session has started.
            let stale = folder.names("out").filter { $0.hasPrefix(".shutterpipe-tmp-") && !$0.contains("-\(session.pid)-") }
            #expect(stale.isEmpty, "seed \(Chaos.seed) round \(round): temporary files survived a restart: \(stale)")
            let client = try await SocketLines(path: socket)
            let count = Int.random(in: burst, using: &random)
            await client.send("{\"event\":\"enter\",\"id\":0}\n" + (1...count).map { "{\"event\":\"capture\",\"id\":\($0)}\n" }.joined())
            sent += count
            let killAfter = Int.random(in: 0...count, using: &random)  // answers to wait for
            _ = await eventually(timeout: .seconds(30)) { client.lines.count >= killAfter + 1 }
            try await Task.sleep(for: .microseconds(Int.random(in: 0...20_000, using: &random)))
            kill(session.pid, SIGKILL)
            _ = await session.process.wait(timeout: .seconds(60))
            await client.waitUntilClosed()  // the reader has taken everything that arrived before the kill

            let names = folder.names("out")
            let temporary = names.filter { $0.hasPrefix(".shutterpipe-tmp-") }
            leftoversSeen += temporary.count
            if temporary.contains(where: { !$0.hasSuffix("-seq.tmp") }) { killedMidWrite += 1 }
            // Every photo under a final name is whole, and named as the template says.
            for photo in names where !photo.hasPrefix(".") {
                let data = FileManager.default.contents(atPath: "\(output)/\(photo)") ?? Data()
                #expect(isWholeJPEG(data), "seed \(Chaos.seed) round \(round): \(photo) is partial or corrupt (\(data.count) bytes)")
                #expect(photo.wholeMatch(of: /shot-\d{5}\.jpg/) != nil, "seed \(Chaos.seed) round \(round): unexpected name \(photo)")
            }
            // Photos answered in earlier rounds are unchanged; then they are moved out of the
            // way (the sequence file keeps their numbers taken), so disk use stays bounded.
            for (path, fingerprint) in answered where FileManager.default.fileExists(atPath: path) {
                #expect(Fingerprint(path) == fingerprint, "seed \(Chaos.seed) round \(round): \(path) changed after it was answered")
                unlink(path)
                archived += 1
            }
            // Every shot answered photoSuccess is on disk, whole; no name is answered twice.
            for reply in await client.replies(0) where reply["state"] as? String == "photoSuccess" {
                for path in reply["files"] as? [String] ?? [] {
                    #expect(answered[path] == nil, "seed \(Chaos.seed) round \(round): \(path) answered twice: a sequence number reused")
                    let data = FileManager.default.contents(atPath: path)
                    #expect(data.map(isWholeJPEG) == true, "seed \(Chaos.seed) round \(round): answered \(path) is not whole on disk")
                    answered[path] = Fingerprint(path)
                }
            }
        }
        for (path, fingerprint) in answered where FileManager.default.fileExists(atPath: path) {
            #expect(Fingerprint(path) == fingerprint, "seed \(Chaos.seed): \(path) changed after it was answered")
        }
        // A clean session afterwards leaves no temporary file at all.
        let last = try await SocketSession.start(config, socket: socket, in: folder, environment: environment)
        let client = try await SocketLines(path: socket)
        await client.send("{\"event\":\"capture\",\"id\":1}\n")
        #expect(await client.replies(1).first?["state"] as? String == "photoSuccess")
        #expect(await last.stop().status == 0)
        #expect(folder.names("out").filter { $0.hasPrefix(".shutterpipe-tmp-") }.isEmpty)
        let stored = folder.names("out").filter { !$0.hasPrefix(".") }
        let numbers = (stored.map { "\(output)/\($0)" } + answered.keys).compactMap { Int(($0 as NSString).lastPathComponent.dropFirst(5).prefix(5)) }
        #expect(Set(numbers).count == Set(stored.map { "\(output)/\($0)" } + answered.keys).count, "seed \(Chaos.seed): a sequence number names two files")
        Chaos.record(name, ["kills": kills, "capturesSent": sent, "answeredSuccess": answered.count, "photosOnDisk": stored.count + archived,
                            "roundsWithTempFilesAtKill": killedMidWrite, "temporaryFilesCleaned": leftoversSeen,
                            "seconds": Double((ContinuousClock.now - started).components.seconds)])
        return Report(answered: answered.count, stored: stored.count + archived)
    }
}

/// Size and a sample of the bytes of a file: enough to see it replaced or rewritten,
/// without keeping hundreds of megabytes in memory.
struct Fingerprint: Equatable {
    var size: Int
    var sample: [UInt8]

    init?(_ path: String) {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        size = data.count
        sample = stride(from: 0, to: data.count, by: 997).map { data[data.startIndex + $0] } + Array(data.suffix(64))
    }
}
