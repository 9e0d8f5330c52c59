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
    /// The raw digest of `chunks`, one after the other.
    static func sha256(_ chunks: [Data]) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { return [] }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else { return [] }
        for chunk in chunks {
            guard chunk.withUnsafeBytes({ EVP_DigestUpdate(context, $0.baseAddress, $0.count) }) == 1 else { return [] }
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

    /// Hashes what the sink stored on a thread of its own, below the session's priority,
    /// after the answer: nothing waits for it. Each digest goes to the session's catalogue
    /// (``ShotCatalogue/recordDigest(of:sha256:)``) as it is made. The bytes of a few
    /// photos wait at most; beyond that a file is left to the catalogue, which reads it
    /// back once the session is quiet.
    final class Queue: Sendable {
        fileprivate struct Job: Sendable {
            var path: String
            var chunks: [Data]
            var catalogue: any ShotCatalogue
        }

        /// How many photos' bytes wait at most.
        static let most = 16

        private let shared = Shared()

        init() {
            let shared = self.shared
            OwnedThread.start("shutterpipe files digests") {
                // Nice 19, below the sink's own writing thread (10): on two cores in a burst
                // the hashing takes only what the stores leave.
                let which = __priority_which_t(PRIO_PROCESS.rawValue)
                _ = setpriority(which, 0, 19)
                shared.serve()
            }
        }

        /// Released with its sink: the thread ends once what is queued is handed over.
        deinit { shared.stop() }

        /// Queues the file at `path` (its bytes as written); false, queuing nothing, when
        /// `most` wait already.
        @discardableResult
        func submit(_ path: String, _ chunks: [Data], to catalogue: any ShotCatalogue) -> Bool {
            shared.submit(Job(path: path, chunks: chunks, catalogue: catalogue))
        }

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
        var stopped = false
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)

    func submit(_ job: PhotoDigest.Queue.Job) -> Bool {
        let queued = state.withLock { state -> Bool in
            guard state.busy < PhotoDigest.Queue.most, !state.stopped else { return false }
            state.busy += 1
            state.jobs.append(job)
            return true
        }
        if queued { wake.signal() }
        return queued
    }

    func stop() {
        state.withLock { $0.stopped = true }
        wake.signal()
    }

    func serve() {
        while true {
            wake.wait()
            let (job, ended) = state.withLock { state in (state.jobs.isEmpty ? nil : state.jobs.removeFirst(), state.stopped && state.jobs.isEmpty) }
            if let job {
                if let digest = PhotoDigest.hex(PhotoDigest.sha256(job.chunks)) {
                    // This thread's own wait, never the pool's: one digest at a time.
                    _ = waitForAsyncWork(timeout: .seconds(30)) { await job.catalogue.recordDigest(of: job.path, sha256: digest) }
                }
                state.withLock { $0.busy -= 1 }
                continue
            }
            if ended { return }
        }
    }

    func waitUntilDone(within limit: Duration) {
        let deadline = ContinuousClock.now + limit
        while state.withLock({ $0.busy }) > 0 && ContinuousClock.now < deadline {
            var pause = timespec(tv_sec: 0, tv_nsec: 5_000_000)
            nanosleep(&pause, nil)
        }
    }
}
