#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
@testable import ShutterPipeCatalogue
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization
import TestSupport
import Testing

@Suite("catalogue: bursts", .timeLimit(.minutes(3)))
struct BurstCatalogueTests {
    @Test("120 shots arriving at once (a burst): recorded without their digests, which come once the session is quiet, each equal to sha256sum's")
    func digestsAfterBurst() async throws {
        let folder = TemporaryDirectory("catalogue-burst")
        let photos = folder.file("photos")
        try FileManager.default.createDirectory(atPath: photos, withIntermediateDirectories: true)
        let fixture = try Data(contentsOf: URL(fileURLWithPath: "\(repositoryRoot)/Plugins/FileStub/Tests/Fixtures/IMG_0001.JPG"))
        var shots: [PendingShot] = []
        for number in 1...120 {
            let path = "\(photos)/burst-\(number).jpg"
            try (fixture + Data("\(number)".utf8)).writeTestFile(path)  // 120 different digests
            var answer = ShutterAnswer(request: TriggerEvent(.capture), state: .photoSuccess,
                                       stored: [StoredFile(location: path, byteCount: fixture.count + "\(number)".utf8.count, cameraFile: "IMG_\(number).JPG")],
                                       shot: ShotID(run: "burst", number: number))
            answer.captureTime = Date()
            shots.append(PendingShot(answer: answer, trigger: "stdin", camera: "Test Body", observed: Date()))
        }
        let lines = Mutex<[String]>([])
        let log = Logger(source: "catalogue") { record in lines.withLock { $0.append(record.message) } }
        let path = folder.file("catalogue.sqlite")
        let writer = CatalogueWriter(settings: .init(path: path, folders: [], naming: .append, marksInJPEG: false, session: "burst"), log: log)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in writer.opened { done.resume() } }
        writer.enqueue(shots)
        #expect(await eventually(timeout: .seconds(60)) { lines.withLock { $0.contains { $0.contains("120 shot(s) recorded mid-burst") } } },
                "\(lines.withLock { $0 })")
        // Quiet now: every digest filled in while the session goes on.
        #expect(await eventually(timeout: .seconds(60)) {
            // SQLite may wait for the writer's lock: off the cooperative pool, which other tests share.
            let recorded = (try? await offThePool { try Catalogue.open(at: path, create: false).shots() }) ?? []
            return recorded.count == 120 && recorded.allSatisfy { $0.files.count == 1 && $0.files[0].sha256 != nil }
        })
        let recorded = try await offThePool { try Catalogue.open(at: path, create: false).shots() }
        #expect(Set(recorded.compactMap(\.shotID?.number)) == Set(1...120))
        for shot in recorded.filter({ $0.id % 12 == 1 }) {
            let file = try #require(shot.files.first)
            #expect(file.sha256 == (try await sha256sum(file.path)), "shot \(shot.id)")
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in writer.finish { done.resume() } }
    }

    @Test("a shot stored while the catalogue is still being opened is recorded once, by its answer: the reconciliation takes only the photos that were on disk before the session's first shot could land")
    func storedWhileOpening() async throws {
        let folder = TemporaryDirectory("catalogue-opening")
        let photos = folder.file("photos")
        try FileManager.default.createDirectory(atPath: photos, withIntermediateDirectories: true)
        let fixture = try Data(contentsOf: URL(fileURLWithPath: "\(repositoryRoot)/Plugins/FileStub/Tests/Fixtures/IMG_0001.JPG"))
        try fixture.writeTestFile("\(photos)/earlier.jpg")  // from a run that crashed before its record
        let opening = DispatchSemaphore(value: 0)
        let lines = Mutex<[String]>([])
        let log = Logger(source: "catalogue") { record in lines.withLock { $0.append(record.message) } }
        let path = folder.file(".shutterpipe/catalogue.sqlite")
        let writer = CatalogueWriter(settings: .init(path: path, folders: [photos], naming: .append, marksInJPEG: false, session: "opening"), log: log,
                                     beforeOpening: { _ = opening.wait(timeout: .now() + 60) })
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in writer.listed { done.resume() } }
        // The session's first shot lands while the catalogue is not open yet.
        let stored = "\(photos)/shot-1.jpg"
        try fixture.writeTestFile(stored)
        var answer = ShutterAnswer(request: TriggerEvent(.capture), state: .photoSuccess,
                                   stored: [StoredFile(location: stored, byteCount: fixture.count, cameraFile: "IMG_0001.JPG")],
                                   shot: ShotID(run: "opening", number: 1))
        answer.captureTime = Date()
        writer.enqueue([PendingShot(answer: answer, trigger: "stdin", camera: "Test Body", observed: Date())])
        #expect(FileManager.default.fileExists(atPath: PathName.parent(path)), "the catalogue's folder is made before the listing ends (the session's claim goes there)")
        #expect(!FileManager.default.fileExists(atPath: path), "the catalogue is not opened before the test lets it")
        opening.signal()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in writer.finish { done.resume() } }
        let recorded = try await offThePool { try Catalogue.open(at: path, create: false).shots() }
        #expect(recorded.count == 2, "\(recorded.map { ($0.state, $0.files.map(\.path)) })")
        let imported = recorded.filter { $0.state == .imported }
        #expect(imported.map { $0.files.map(\.path) } == [["\(photos)/earlier.jpg"]])
        let shot = try #require(recorded.first { $0.shotID?.number == 1 })
        #expect(shot.trigger == "stdin" && shot.state == .stored && shot.files.map(\.path) == [stored])
        // Never taken for a photo found on disk (read back for its digest, then replaced).
        let found = lines.withLock { $0.filter { $0.contains("found on disk without a record") } }
        #expect(found.count == 1 && found[0].hasPrefix("catalogue: 1 shot(s) found on disk"), "\(found)")
    }

    @Test("a sink's digests are recorded as given: one that came before its shot's record is used, never read back (it differs from the file's, so a read-back would show); one that came after the record goes into it")
    func sinkDigests() async throws {
        let folder = TemporaryDirectory("catalogue-sink-digests")
        let photos = folder.file("photos")
        try FileManager.default.createDirectory(atPath: photos, withIntermediateDirectories: true)
        func shot(_ number: Int) throws -> PendingShot {
            let path = "\(photos)/given-\(number).jpg"
            try Data("photo \(number)".utf8).writeTestFile(path)
            var answer = ShutterAnswer(request: TriggerEvent(.capture), state: .photoSuccess,
                                       stored: [StoredFile(location: path, byteCount: 7, cameraFile: "IMG_\(number).JPG")],
                                       shot: ShotID(run: "given", number: number))
            answer.captureTime = Date()
            return PendingShot(answer: answer, trigger: "stdin", camera: nil, observed: Date())
        }
        let given = [1: String(repeating: "a", count: 64), 2: String(repeating: "b", count: 64)]
        let lines = Mutex<[String]>([])
        let log = Logger(source: "catalogue") { record in lines.withLock { $0.append(record.message) } }
        let path = folder.file("catalogue.sqlite")
        let writer = CatalogueWriter(settings: .init(path: path, folders: [], naming: .append, marksInJPEG: false, session: "given"), log: log)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in writer.opened { done.resume() } }
        // Shot 1's digest comes first; shot 2's after its record is written. Shot 2's file
        // is gone by then, so that the writer's own read-back (once the session has been
        // quiet half a second, which a loaded machine may reach first) cannot take it.
        writer.digest(given[1]!, of: "\(photos)/given-1.jpg")
        writer.enqueue([try shot(1), try shot(2)])
        try FileManager.default.removeItem(atPath: "\(photos)/given-2.jpg")
        #expect(await eventually(timeout: .seconds(60)) {
            ((try? await offThePool { try Catalogue.open(at: path, create: false).shots() }) ?? []).count == 2
        })
        writer.digest(given[2]!, of: "\(photos)/given-2.jpg")
        #expect(await eventually(timeout: .seconds(60)) {
            let recorded = (try? await offThePool { try Catalogue.open(at: path, create: false).shots() }) ?? []
            return recorded.count == 2 && recorded.allSatisfy { $0.files.first?.sha256 != nil }
        })
        let recorded = try await offThePool { try Catalogue.open(at: path, create: false).shots() }
        for shot in recorded {
            let number = try #require(shot.shotID?.number)
            #expect(shot.files.first?.sha256 == given[number], "shot \(number): the sink's digest, not the file's")
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in writer.finish { done.resume() } }
    }

    @Test("a session's burst of 12 camera-sized photos: `shots` lists every one as soon as the last is answered (waited for in the log), each with the SHA-256 the files sink computed, equal to sha256sum's")
    func burstThroughSession() async throws {
        let folder = TemporaryDirectory("catalogue-burst-session")
        let config = try writeConfig(cataloguePipeline(folder.file("photos"), backend: "  width: 3000\n  height: 2000"), in: folder)
        let session = try await RunningProcess.start(program: try shutterpipeBinary(), ["run", "--config", config, "--verbose"], in: folder.path)
        session.send(String(repeating: "capture\n", count: 12))
        await session.waitForOutput(on: .stdout, "12 answers") { $0.split(separator: "\n").filter { $0.hasPrefix("photoSuccess") }.count == 12 }
        // Recorded 100 ms after the last answer, not after a quiet half second: the
        // log says so before the session ends.
        await session.waitForOutput(on: .stderr, "12 shots recorded") { shotsRecorded(in: $0) >= 12 }
        let listed = try await listedShots(["--config", config], in: folder)
        #expect(listed.count == 12)
        session.closeInput()
        let outcome = await session.wait()
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let shots = try await listedShots(["--config", config], in: folder)
        #expect(shots.count == 12)
        for shot in shots {
            let file = try #require(shot.files.first)
            #expect(file.sha256 == (try await sha256sum(file.path)), "\(file.path)")
        }
    }
}
