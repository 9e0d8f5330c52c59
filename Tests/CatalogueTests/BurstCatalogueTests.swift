#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import ShutterPipeCatalogue
import ShutterPipeKit
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
            try (fixture + Data("\(number)".utf8)).write(to: URL(fileURLWithPath: path))  // 120 different digests
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
}
