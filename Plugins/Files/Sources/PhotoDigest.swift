#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CCrypto
import Dispatch
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// SHA-256 of the bytes the sink writes (OpenSSL's libcrypto), reported with each stored
/// file (``StoredFile/sha256``) so that the session's catalogue records it without reading
/// the photo back; and of a mirror's copy, to check it.
enum PhotoDigest {
    /// The raw digest of `chunks`, one after the other; `beforeSlice` runs before each
    /// `slice` bytes are fed (the queue's pause for a store).
    static func sha256(_ chunks: [Data], slice: Int = .max, beforeSlice: () -> Void = {}) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { return [] }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else { return [] }
        for chunk in chunks {
            let fed = chunk.withUnsafeBytes { bytes -> Bool in
                var offset = 0
                while offset < bytes.count {
                    beforeSlice()
                    let count = min(slice, bytes.count - offset)
                    guard EVP_DigestUpdate(context, bytes.baseAddress! + offset, count) == 1 else { return false }
                    offset += count
                }
                return true
            }
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

    /// Hashes what the sink stored on a thread of its own, once the sink is quiet: nothing
    /// waits for it, and it never competes with the next shot's store. Each digest goes to
    /// the session's catalogue (``ShotCatalogue/recordDigest(of:sha256:)``) as it is made.
    ///
    /// - The thread runs at SCHED_IDLE: only on a core nothing else wants.
    /// - It hashes only while no store is in progress and none ended in the last
    ///   ``settle``, a slice of 1 MiB at a time: a store that begins mid-hash pauses it at
    ///   the next slice. In a burst the hashing waits for the burst's end; between a
    ///   camera's shots it fits in the gaps.
    /// - The bytes of at most ``most`` photos and ``mostBytes`` wait; beyond that a file is
    ///   left to the catalogue, which reads it back once the session is quiet.
    final class Queue: Sendable {
        fileprivate struct Job: Sendable {
            var path: String
            var chunks: [Data]
            var catalogue: any ShotCatalogue
            var bytes: Int { chunks.reduce(0) { $0 + $1.count } }
        }

        /// How many photos' bytes wait at most.
        static let most = 64
        /// How many bytes wait at most: a 30-shot burst of 9.5 MB JPEGs (285 MB) fits.
        static let mostBytes = 320 << 20
        /// How long the sink must have stored nothing before hashing goes on.
        static let settle: Duration = .milliseconds(20)
        /// What is hashed between two looks at the sink.
        static let slice = 1 << 20

        private let shared = Shared()

        init() {
            let shared = self.shared
            OwnedThread.start("shutterpipe files digests") {
                // SCHED_IDLE: the hashing runs only on a core nothing else wants, and any
                // store, read or trigger that wakes takes the core from it at once (nice 19
                // still took a share: a 30-shot burst ran 1.04-1.18x as long with it).
                var parameters = sched_param(sched_priority: 0)
                let schedIdle: Int32 = 5  // SCHED_IDLE, which Glibc shows only under _GNU_SOURCE
                _ = sched_setscheduler(0, schedIdle, &parameters)
                shared.serve()
            }
        }

        /// Released with its sink: the thread ends once what is queued is handed over.
        deinit { shared.stop() }

        /// Queues the file at `path` (its bytes as written); false, queuing nothing, when
        /// `most` photos or `mostBytes` wait already.
        @discardableResult
        func submit(_ path: String, _ chunks: [Data], to catalogue: any ShotCatalogue) -> Bool {
            shared.submit(Job(path: path, chunks: chunks, catalogue: catalogue))
        }

        /// Runs `store` (the sink's writing of a photo), the hashing paused meanwhile.
        func storing<Result, Failure: Error>(_ store: () throws(Failure) -> Result) throws(Failure) -> Result {
            shared.storeBegan()
            defer { shared.storeEnded() }
            return try store()
        }

        /// Whether the thread is holding a digest back because the sink is storing (for tests).
        var heldBack: Bool { shared.heldBack }

        /// Blocks (on a thread of the caller's own) until every queued digest was handed
        /// to the catalogue, or `limit` passed.
        func waitUntilDone(within limit: Duration) {
            shared.waitUntilDone(within: limit)
        }
    }
}

/// What a digest queue and its thread share (the thread holds it, not the queue).
private final class Shared: Sendable {
    private struct State {
        var jobs: [PhotoDigest.Queue.Job] = []
        /// Queued or being hashed and handed over.
        var busy = 0
        var bytes = 0
        var stopped = false
        /// Stores in progress in the sink, and when the last one ended.
        var storing = 0
        var lastStoreEnded: ContinuousClock.Instant?
        var heldBack = false
    }

    private let state = Mutex(State())
    /// Signalled once per job and at the stop.
    private let wake = DispatchSemaphore(value: 0)
    /// Signalled when a store ends.
    private let storeDone = DispatchSemaphore(value: 0)

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
        wake.signal()
        storeDone.signal()
    }

    func storeBegan() { state.withLock { $0.storing += 1 } }

    func storeEnded() {
        state.withLock { $0.storing -= 1; $0.lastStoreEnded = .now }
        storeDone.signal()
    }

    var heldBack: Bool { state.withLock { $0.heldBack } }

    func serve() {
        while true {
            wake.wait()
            let (job, ended) = state.withLock { state in (state.jobs.isEmpty ? nil : state.jobs.removeFirst(), state.stopped && state.jobs.isEmpty) }
            if let job {
                run(job, slice: PhotoDigest.Queue.slice, beforeSlice: waitUntilQuiet)
                continue
            }
            if ended { return }
        }
    }

    /// Hashes `job` and hands its digest over, on the calling thread (its own, or the
    /// sink's at the session's end: never the pool's).
    private func run(_ job: PhotoDigest.Queue.Job, slice: Int, beforeSlice: () -> Void) {
        if let digest = PhotoDigest.hex(PhotoDigest.sha256(job.chunks, slice: slice, beforeSlice: beforeSlice)) {
            // One digest at a time; the wait is this thread's own.
            _ = waitForAsyncWork(timeout: .seconds(30)) { await job.catalogue.recordDigest(of: job.path, sha256: digest) }
        }
        state.withLock { $0.busy -= 1; $0.bytes -= job.bytes }
    }

    /// Returns once no store is in progress and none ended within `settle` (or the queue
    /// stopped).
    private func waitUntilQuiet() {
        while true {
            let pause = state.withLock { state -> Duration? in
                let settled = state.lastStoreEnded.map { ContinuousClock.now - $0 >= PhotoDigest.Queue.settle } ?? true
                state.heldBack = !state.stopped && (state.storing > 0 || !settled)
                guard state.heldBack else { return nil }
                return state.storing > 0 ? .seconds(1) : PhotoDigest.Queue.settle - (ContinuousClock.now - state.lastStoreEnded!)
            }
            guard let pause else { return }
            _ = storeDone.wait(timeout: max(pause, .milliseconds(1)).fromNow)
        }
    }

    /// The session is ending: no store comes any more, so the caller's thread hashes
    /// beside the queue's own, two at a time, until both are done or `limit` passed.
    func waitUntilDone(within limit: Duration) {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            let (job, busy) = state.withLock { state in (state.jobs.isEmpty ? nil : state.jobs.removeFirst(), state.busy) }
            if let job {
                run(job, slice: .max, beforeSlice: {})
                continue
            }
            guard busy > 0 else { return }
            var pause = timespec(tv_sec: 0, tv_nsec: 2_000_000)
            nanosleep(&pause, nil)
        }
    }
}
