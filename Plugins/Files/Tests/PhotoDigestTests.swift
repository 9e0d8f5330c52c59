import Dispatch
@testable import FilesSink
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization
import TestSupport
import Testing

/// A catalogue that keeps the digests it is given, and nothing else; with a gate, it takes
/// each only as the test lets it through.
private final class DigestCatalogue: ShotCatalogue {
    let digests = Mutex<[String: String]>([:])
    let gate: Gate?
    init(gate: Gate? = nil) { self.gate = gate }
    func shot(_ id: Int) async throws -> CatalogueShot? { nil }
    func shot(for shot: ShotID) async throws -> CatalogueShot? { nil }
    func shots(_ filter: ShotFilter) async throws -> [CatalogueShot] { [] }
    func count(_ filter: ShotFilter) async throws -> Int { 0 }
    func mark(_ id: Int, _ changes: [ShotMarkChange]) async throws -> CatalogueShot {
        throw ShutterError(.unexpected, "not a real catalogue")
    }
    func observe(_ observer: @escaping @Sendable (CatalogueChange) -> Void) {}
    func recordDigest(of path: String, sha256: String) async {
        try? await gate?.pass(honouringCancellation: false)
        digests.withLock { $0[path] = sha256 }
    }
    var cacheFolder: String? { nil }
}

extension PhotoDigest.Queue {
    /// Begins a digest and names its file at once (a file stored as soon as it was begun).
    func submit(_ path: String, _ chunks: [Data], to catalogue: any ShotCatalogue) -> Bool {
        guard let pending = begin(chunks, for: catalogue) else { return false }
        pending.stored(at: path)
        return true
    }
}

@Suite("files sink: digests beside the stores", .timeLimit(.minutes(2)))
struct PhotoDigestTests {
    @Test("a photo's digest, made from the bytes in several chunks, is sha256sum's digest of the file")
    func matchesSha256sum() async throws {
        let folder = TemporaryDirectory("photo-digest")
        let bytes = Data((0..<(3 << 20) + 12_345).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        let path = folder.file("IMG_0001.JPG")
        try bytes.writeTestFile(path)
        let expected = String(try await runProgram(["/usr/bin/sha256sum", path]).text.prefix(64))

        let queue = PhotoDigest.Queue()
        let catalogue = DigestCatalogue()
        #expect(queue.submit(path, [bytes.prefix(1000), Data(), bytes.dropFirst(1000)], to: catalogue))
        #expect(await eventually { catalogue.digests.withLock { $0[path] } != nil })
        #expect(catalogue.digests.withLock { $0[path] } == expected)
    }

    @Test("the store never waits for a digest: photos are hashed while the catalogue still holds the earlier ones, on every thread of the queue")
    func hashesBesideTheCatalogue() async throws {
        let queue = PhotoDigest.Queue()
        let catalogue = DigestCatalogue(gate: Gate("digest handed over"))
        let photos = (0..<(queue.threads + 2)).map { index in ("/photos/IMG_\(index).JPG", Data(repeating: UInt8(index), count: 1 << 20)) }
        // Submitting returns at once, whatever the catalogue does with what it gets.
        for (path, bytes) in photos { #expect(queue.submit(path, [bytes], to: catalogue)) }
        // Every thread hashes a photo and waits at the catalogue: none is held back for another.
        #expect(await eventually { catalogue.gate!.arrivals == queue.threads })
        catalogue.gate!.open()
        try await offThePool { queue.waitUntilDone(within: .seconds(60)) }
        #expect(catalogue.digests.withLock { $0 } == Dictionary(uniqueKeysWithValues: photos.map { ($0.0, PhotoDigest.hex(PhotoDigest.sha256([$0.1]))!) }))
    }

    @Test("at the session's end the sink's own thread hashes beside the queue's: every queued photo's digest is handed over before waitUntilDone returns, one at a time and in pairs",
          arguments: [false, true])
    func endHashesEverything(pairs: Bool) async throws {
        guard !pairs || SHA256Pair.isSupported else { return print("skipped: pairs: this CPU has no SHA extensions") }
        let queue = PhotoDigest.Queue(pairs: pairs)
        let catalogue = DigestCatalogue()
        var expected: [String: String] = [:]
        for index in 0..<12 {
            let bytes = Data(repeating: UInt8(index), count: (2 << 20) + index)
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
        // A catalogue that holds every digest keeps the queue from draining while it fills.
        let catalogue = DigestCatalogue(gate: Gate("digest handed over"))
        let large = Data(count: PhotoDigest.Queue.mostBytes / 2)
        #expect(queue.submit("/photos/a.jpg", [large], to: catalogue))
        #expect(queue.submit("/photos/b.jpg", [large], to: catalogue))
        #expect(!queue.submit("/photos/c.jpg", [Data(count: 1)], to: catalogue))
        catalogue.gate!.open()
        try await offThePool { queue.waitUntilDone(within: .seconds(60)) }
        #expect(catalogue.digests.withLock { Set($0.keys) } == ["/photos/a.jpg", "/photos/b.jpg"])
        // Handed over, the budget is free again.
        #expect(queue.submit("/photos/c.jpg", [Data(count: 1)], to: catalogue))
    }

    @Test("a digest is made while its file is written, before the sink names it; it is handed over only once named, and one abandoned (a store that failed) never is")
    func begunBeforeTheWrite() async throws {
        let queue = PhotoDigest.Queue()
        let catalogue = DigestCatalogue()
        let (kept, lost) = (Data(repeating: 1, count: 3 << 20), Data(repeating: 2, count: 3 << 20))
        let keptDigest = try #require(queue.begin([kept], for: catalogue))
        let lostDigest = try #require(queue.begin([lost], for: catalogue))
        // Both are hashed, and wait for their files' names: nothing is handed over yet.
        #expect(await eventually { keptDigest.isHashed && lostDigest.isHashed })
        #expect(catalogue.digests.withLock { $0.isEmpty })
        lostDigest.abandon()
        keptDigest.stored(at: "/photos/IMG_0001.JPG")
        keptDigest.abandon()  // the sink's clean-up after a store: nothing once named
        try await offThePool { queue.waitUntilDone(within: .seconds(60)) }
        #expect(catalogue.digests.withLock { $0 } == ["/photos/IMG_0001.JPG": PhotoDigest.hex(PhotoDigest.sha256([kept]))!])
    }

    @Test("photos hashed two at a time (SHA-NI) get OpenSSL's digests, whatever their sizes and however their bytes are split into chunks; a photo alone still gets its digest")
    func pairsMatchOpenSSL() async throws {
        guard SHA256Pair.isSupported else { return print("skipped: pairsMatchOpenSSL: this CPU has no SHA extensions") }
        var generator = SystemRandomNumberGenerator()
        var pool = Data(count: 1 << 20)
        pool.withUnsafeMutableBytes { raw in for index in 0..<(raw.count / 8) { raw.storeBytes(of: generator.next(), toByteOffset: 8 * index, as: UInt64.self) } }
        for _ in 0..<120 {
            func message() -> [Data] {
                let size = Int.random(in: 0...(Bool.random(using: &generator) ? 300 : 200_000), using: &generator)
                let offset = Int.random(in: 0...(pool.count - size), using: &generator)
                let bytes = pool[offset..<(offset + size)]
                var chunks: [Data] = [], start = 0
                while start < size, chunks.count < 4 {
                    let end = Int.random(in: start...size, using: &generator)
                    chunks.append(bytes[(bytes.startIndex + start)..<(bytes.startIndex + end)])
                    start = end
                }
                return chunks + [bytes[(bytes.startIndex + start)...]]
            }
            let (first, second) = (message(), message())
            let pair = try #require(SHA256Pair.digests(first, second))
            #expect(pair.first == PhotoDigest.sha256(first) && pair.second == PhotoDigest.sha256(second),
                    "sizes \(first.map(\.count)) and \(second.map(\.count))")
        }
        // Through a pairing queue: three photos (a pair, then one waits for a partner that
        // never comes, and is hashed alone).
        let queue = PhotoDigest.Queue(pairs: true)
        let catalogue = DigestCatalogue()
        var expected: [String: String] = [:]
        for index in 0..<3 {
            let bytes = Data(repeating: UInt8(index + 1), count: (1 << 20) + 7 * index)
            expected["/photos/IMG_\(index).JPG"] = PhotoDigest.hex(PhotoDigest.sha256([bytes]))
            #expect(queue.submit("/photos/IMG_\(index).JPG", [bytes.prefix(100), bytes.dropFirst(100)], to: catalogue))
        }
        let all = expected
        #expect(await eventually { catalogue.digests.withLock { $0 } == all })
    }
}
