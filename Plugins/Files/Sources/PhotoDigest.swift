#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CCrypto
import Dispatch
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// SHA-256 of the bytes the sink writes (OpenSSL's libcrypto, or two at once on SHA-NI),
/// handed to the session's catalogue for each stored file
/// (``ShotCatalogue/recordDigest(of:sha256:)``) so that it records it without reading the
/// photo back; and of a mirror's copy, to check it.
enum PhotoDigest {
    /// The raw digest of `chunks`, one after the other.
    static func sha256(_ chunks: [Data]) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { return [] }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else { return [] }
        for chunk in chunks {
            let fed = chunk.withUnsafeBytes { bytes in bytes.isEmpty || EVP_DigestUpdate(context, bytes.baseAddress!, bytes.count) == 1 }
            guard fed else { return [] }
        }
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_DigestFinal_ex(context, &digest, &length) == 1 else { return [] }
        return Array(digest.prefix(Int(length)))
    }

    /// The raw digest of `data`.
    static func sha256(_ data: Data) -> [UInt8] { sha256([data]) }

    /// Lowercase hex, as the catalogue and `sha256sum` print it.
    static func hex(_ digest: [UInt8]) -> String? {
        digest.isEmpty ? nil : digest.map { String(format: "%02x", $0) }.joined()
    }

    /// Hashes what the sink stores on threads of their own: nothing waits for it, and it
    /// takes only CPU time that nothing else wants. Each digest goes to the session's
    /// catalogue (``ShotCatalogue/recordDigest(of:sha256:)``) once its file is safe.
    ///
    /// - A photo's hashing begins as soon as its bytes are ready, before they are written
    ///   (``begin(_:for:)``): it fills the wait for that photo's own fsync, so that the
    ///   digest is ready when the photo is safe, and the session's end waits for none. The
    ///   digest is handed over once the sink names the file (``Pending/stored(at:)``),
    ///   and never for a file that was not stored (``Pending/abandon()``).
    /// - Photos are hashed two at a time where the CPU has the SHA extensions
    ///   (``SHA256Pair``): one photo's SHA-256 leaves a core half idle, two together take
    ///   about the time of one. A photo waits up to 25 ms for the next (in a burst the
    ///   next store begins within about 10 ms), so one thread does it; without pairs, two
    ///   threads (one on a single core) hash a photo each.
    /// - At SCHED_IDLE: a store, a read or a trigger that wakes takes the core from them
    ///   at once. A burst's stores wait on their fsyncs most of the time, and the hashing
    ///   fills those waits (one thread that paused for every store left the whole burst's
    ///   hashing to the end: 1.44-1.56x as long as with the catalogue off).
    /// - The bytes of at most ``most`` photos and ``mostBytes`` wait; beyond that a file is
    ///   left to the catalogue, which reads it back once the session is quiet.
    final class Queue: Sendable {
        fileprivate struct Job: Sendable {
            var pending: Pending
            var chunks: [Data]
            var catalogue: any ShotCatalogue
            var bytes: Int { chunks.reduce(0) { $0 + $1.count } }
        }

        /// How many photos' bytes wait at most.
        static let most = 64
        /// How many bytes wait at most: a 30-shot burst of 9.5 MB JPEGs (285 MB) fits.
        static let mostBytes = 320 << 20
        /// How many threads hash: one when photos are hashed in pairs (two photos take
        /// a core), else two (one on a single core).
        let threads: Int
        /// Whether photos are hashed two at a time (``SHA256Pair``).
        let pairs: Bool

        private let shared: Shared

        /// A queue that pairs photos where that is faster (``SHA256Pair/isFaster``).
        init(pairs: Bool = SHA256Pair.isFaster) {
            self.pairs = pairs
            threads = pairs ? 1 : min(2, max(1, ProcessInfo.processInfo.activeProcessorCount))
            shared = Shared(threads: threads, pairs: pairs)
            for _ in 0..<threads {
                OwnedThread.start("shutterpipe files digests") { [shared] in
                    var parameters = sched_param(sched_priority: 0)
                    let schedIdle: Int32 = 5  // SCHED_IDLE, which Glibc shows only under _GNU_SOURCE
                    _ = sched_setscheduler(0, schedIdle, &parameters)
                    shared.serve()
                }
            }
        }

        /// Released with its sink: the threads end once what is queued is handed over.
        deinit { shared.stop() }

        /// Begins hashing `chunks`, the bytes of a file about to be written; nil, queuing
        /// nothing, when `most` photos or `mostBytes` wait already. The caller names the
        /// file once it is safe, or abandons it.
        func begin(_ chunks: [Data], for catalogue: any ShotCatalogue) -> Pending? {
            let pending = Pending()
            return shared.submit(Job(pending: pending, chunks: chunks, catalogue: catalogue)) ? pending : nil
        }

        /// Blocks (on a thread of the caller's own) until every queued digest was handed
        /// to the catalogue, or `limit` passed; the caller's thread hashes beside the
        /// queue's meanwhile.
        func waitUntilDone(within limit: Duration) {
            shared.waitUntilDone(within: limit)
        }
    }

    /// Where a digest begun before its file was written goes: the file's path, once the
    /// sink stored it, or nowhere.
    final class Pending: Sendable {
        /// nil until told; then the path, or nil for a file not stored.
        private let outcome = Mutex<String??>(nil)
        private let told = DispatchSemaphore(value: 0)

        /// The file is safe at `path`: its digest goes to the catalogue.
        func stored(at path: String) { tell(path) }

        /// The file was not stored: its digest goes nowhere. After ``stored(at:)``, nothing.
        func abandon() { tell(nil) }

        private func tell(_ path: String?) {
            let first = outcome.withLock { outcome -> Bool in
                guard outcome == nil else { return false }
                outcome = .some(path)
                return true
            }
            if first { told.signal() }
        }

        private let hashed = Atomic(false)
        /// Whether its digest is made (and waits for the file's name, if not told yet).
        var isHashed: Bool { hashed.load(ordering: .acquiring) }

        /// Waits (on a digest thread) until the sink tells, at most `limit`; the path, or
        /// nil for a file not stored (or a sink that never told).
        fileprivate func path(within limit: Duration) -> String? {
            hashed.store(true, ordering: .releasing)
            _ = told.wait(timeout: limit.fromNow)
            return outcome.withLock { $0 ?? nil }
        }
    }
}

/// What a digest queue and its threads share (the threads hold it, not the queue).
private final class Shared: Sendable {
    private struct State {
        var jobs: [PhotoDigest.Queue.Job] = []
        /// Queued or being hashed and handed over.
        var busy = 0
        var bytes = 0
        var stopped = false
        /// The session is ending: no photo comes to pair with.
        var draining = false
    }

    private let state = Mutex(State())
    private let threads: Int
    /// Signalled once per job, and once per thread at the stop and at the drain.
    private let wake = DispatchSemaphore(value: 0)
    /// Signalled each time a job was handed over.
    private let handedOver = DispatchSemaphore(value: 0)
    /// Whether photos are hashed two at a time (``SHA256Pair``), and how long a photo
    /// waits for a second: in a burst the next store begins within about 10 ms.
    private let pairs: Bool
    private static let partnerWait: Duration = .milliseconds(25)

    init(threads: Int, pairs: Bool) {
        self.threads = threads
        self.pairs = pairs
    }

    func submit(_ job: PhotoDigest.Queue.Job) -> Bool {
        let bytes = job.bytes
        let queued = state.withLock { state -> Bool in
            guard state.busy < PhotoDigest.Queue.most, state.bytes + bytes <= PhotoDigest.Queue.mostBytes, !state.stopped else { return false }
            state.busy += 1
            state.bytes += bytes
            state.jobs.append(job)
            return true
        }
        if queued { wake.signal() }
        return queued
    }

    func stop() {
        state.withLock { $0.stopped = true }
        for _ in 0..<threads { wake.signal() }
    }

    private func next() -> PhotoDigest.Queue.Job? {
        state.withLock { $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }
    }

    func serve() {
        while true {
            wake.wait()
            let (job, ended) = state.withLock { state in (state.jobs.isEmpty ? nil : state.jobs.removeFirst(), state.stopped && state.jobs.isEmpty) }
            guard let job else {
                if ended { return }
                continue
            }
            var partner = pairs ? next() : nil
            if pairs && partner == nil {
                // Two photos hash in about the time of one: the next photo of a burst is
                // waited for a moment (a wake whose job another thread took waits on).
                let deadline = ContinuousClock.now + Self.partnerWait
                while partner == nil, !state.withLock({ $0.draining || $0.stopped }), ContinuousClock.now < deadline {
                    if wake.wait(timeout: (deadline - ContinuousClock.now).fromNow) == .timedOut { break }
                    partner = next()
                }
            }
            run(job, partner)
        }
    }

    /// Hashes `job` (with `partner`, together, when there is one) and hands the digests
    /// over, on the calling thread (one of the queue's, or the sink's at the session's
    /// end: never the pool's).
    private func run(_ job: PhotoDigest.Queue.Job, _ partner: PhotoDigest.Queue.Job? = nil) {
        let digests: [(PhotoDigest.Queue.Job, [UInt8])]
        if let partner, let pair = SHA256Pair.digests(job.chunks, partner.chunks) {
            digests = [(job, pair.first), (partner, pair.second)]
        } else {
            digests = ([job] + (partner.map { [$0] } ?? [])).map { ($0, PhotoDigest.sha256($0.chunks)) }
        }
        for (job, raw) in digests {
            // Stores come one at a time: while this thread waits for a file's name, the
            // next photo's bytes are not ready yet, so the wait takes no hashing time.
            if let digest = PhotoDigest.hex(raw), let path = job.pending.path(within: .seconds(120)) {
                // One digest at a time per thread; the wait is this thread's own.
                _ = waitForAsyncWork(timeout: .seconds(30)) { await job.catalogue.recordDigest(of: path, sha256: digest) }
            }
            state.withLock { $0.busy -= 1; $0.bytes -= job.bytes }
            handedOver.signal()
        }
    }

    /// The session is ending: no store comes any more, so the caller's thread hashes
    /// beside the queue's own until all are handed over or `limit` passed; a queue thread
    /// waiting for a second photo stops waiting.
    func waitUntilDone(within limit: Duration) {
        state.withLock { $0.draining = true }
        for _ in 0..<threads { wake.signal() }
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            let (job, partner, busy) = state.withLock { state in
                (state.jobs.isEmpty ? nil : state.jobs.removeFirst(), pairs && !state.jobs.isEmpty ? state.jobs.removeFirst() : nil, state.busy)
            }
            if let job {
                run(job, partner)
                continue
            }
            guard busy > 0 else { return }
            _ = handedOver.wait(timeout: (deadline - ContinuousClock.now).fromNow)
        }
    }
}
