import Dispatch
@testable import FilesSink
import Foundation
import ShutterPipeKit
import Synchronization
import TestSupport
import Testing

/// A catalogue that keeps the digests it is given, and nothing else.
private final class DigestCatalogue: ShotCatalogue {
    let digests = Mutex<[String: String]>([:])
    func shot(_ id: Int) async throws -> CatalogueShot? { nil }
    func shot(for shot: ShotID) async throws -> CatalogueShot? { nil }
    func shots(_ filter: ShotFilter) async throws -> [CatalogueShot] { [] }
    func count(_ filter: ShotFilter) async throws -> Int { 0 }
    func mark(_ id: Int, _ changes: [ShotMarkChange]) async throws -> CatalogueShot {
        throw ShutterError(.unexpected, "not a real catalogue")
    }
    func observe(_ observer: @escaping @Sendable (CatalogueChange) -> Void) {}
    func recordDigest(of path: String, sha256: String) async { digests.withLock { $0[path] = sha256 } }
    var cacheFolder: String? { nil }
}

@Suite("files sink: digests after the stores", .timeLimit(.minutes(2)))
struct PhotoDigestTests {
    @Test("a photo's digest waits while the sink stores the next one, and is made once the store ends: sha256sum's digest of the same bytes")
    func waitsForStores() async throws {
        let folder = TemporaryDirectory("photo-digest-gate")
        // Several slices, so that the hashing looks at the sink more than once.
        let bytes = Data((0..<(3 * PhotoDigest.Queue.slice + 12_345)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        let path = folder.file("IMG_0001.JPG")
        try bytes.write(to: URL(fileURLWithPath: path))
        let expected = String(try await runProgram(["/usr/bin/sha256sum", path]).text.prefix(64))

        let queue = PhotoDigest.Queue()
        let catalogue = DigestCatalogue()
        let began = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let ended = DispatchSemaphore(value: 0)
        // The next shot's store, held open by the test.
        let store = Thread {
            queue.storing {
                began.signal()
                _ = release.wait(timeout: .now() + 60)
            }
            ended.signal()
        }
        store.start()
        #expect(try await offThePool { began.wait(timeout: .now() + 60) } == .success)
        #expect(queue.submit(path, [bytes.prefix(1000), bytes.dropFirst(1000)], to: catalogue))
        // The digest thread reaches the gate and holds back; nothing is recorded meanwhile.
        #expect(await eventually { queue.heldBack })
        #expect(catalogue.digests.withLock { $0.isEmpty })
        release.signal()
        #expect(try await offThePool { ended.wait(timeout: .now() + 60) } == .success)
        #expect(await eventually { catalogue.digests.withLock { $0[path] } != nil })
        #expect(catalogue.digests.withLock { $0[path] } == expected)
        #expect(!queue.heldBack)
    }

    @Test("at the session's end the sink's own thread hashes beside the queue's: every queued photo's digest is handed over before waitUntilDone returns")
    func endHashesEverything() async throws {
        let queue = PhotoDigest.Queue()
        let catalogue = DigestCatalogue()
        var expected: [String: String] = [:]
        for index in 0..<12 {
            let bytes = Data(repeating: UInt8(index), count: 2 * PhotoDigest.Queue.slice + index)
            let path = "/photos/IMG_\(index).JPG"
            expected[path] = PhotoDigest.hex(PhotoDigest.sha256([bytes]))
            #expect(queue.submit(path, [bytes], to: catalogue))
        }
        try await offThePool { queue.waitUntilDone(within: .seconds(60)) }
        #expect(catalogue.digests.withLock { $0 } == expected)
    }

    @Test("the bytes waiting are bounded: a photo past the budget is not queued (the catalogue reads it back later)")
    func bounded() async throws {
        let queue = PhotoDigest.Queue()
        let catalogue = DigestCatalogue()
        let began = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        // A store held open keeps the queue from draining while it fills.
        Thread { queue.storing { began.signal(); _ = release.wait(timeout: .now() + 60) } }.start()
        #expect(try await offThePool { began.wait(timeout: .now() + 60) } == .success)
        let large = Data(count: PhotoDigest.Queue.mostBytes / 2)
        #expect(queue.submit("/photos/a.jpg", [large], to: catalogue))
        #expect(queue.submit("/photos/b.jpg", [large], to: catalogue))
        #expect(!queue.submit("/photos/c.jpg", [Data(count: 1)], to: catalogue))
        release.signal()
        try await offThePool { queue.waitUntilDone(within: .seconds(60)) }
        #expect(catalogue.digests.withLock { Set($0.keys) } == ["/photos/a.jpg", "/photos/b.jpg"])
    }
}
