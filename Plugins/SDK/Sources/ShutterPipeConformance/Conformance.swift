import Foundation
import ShutterPipeFixtures
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// Checks a plugin against the contracts the coordinator relies on. Each check returns
/// the problems it found, in words; an empty list means the plugin conforms. Use it in a
/// plugin's own tests:
///
/// ```swift
/// let problems = await Conformance.checkSink { ManifestSink(path: folder + "/m.jsonl", session: "t") }
/// #expect(problems.isEmpty, "\(problems)")
/// ```
///
/// Every plugin call runs on a thread the kit watches (`PoolWatch`): a call that holds
/// it for more than two seconds would have held a thread of the cooperative pool, and is
/// reported. Every call also runs under a deadline, so a plugin that hangs is a problem
/// in the list, not a test that never ends.
public enum Conformance {
    /// A photo to feed sinks: RAW+JPEG, as many cameras deliver, so a sink must keep
    /// both files. The JPEG is a synthetic 1600×1200 image; the RAW is opaque bytes.
    public static func samplePhoto(shot: Int = 1, detail: Int = 4) -> CapturedPhoto {
        var raw = Data("shutterpipe conformance raw \(shot)\n".utf8)
        var random = SeededRandom(seed: UInt64(shot))
        raw += (0..<65_536).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        return CapturedPhoto(files: [CapturedFile(name: String(format: "CONF%04d.JPG", shot),
                                                  data: SyntheticJPEG.make(width: 1600, height: 1200, shot: shot, detail: detail)),
                                     CapturedFile(name: String(format: "CONF%04d.CR2", shot), data: raw)],
                             camera: "conformance")
    }

    /// ``samplePhoto(shot:detail:)``, made once per process on a thread of its own:
    /// encoding a 1600×1200 JPEG is seconds of work in a debug build, which on the
    /// cooperative pool would stall every other test running beside the kit.
    static func preparedSample(shot: Int) async -> CapturedPhoto {
        if let ready = samples.withLock({ $0[shot] }) { return ready }
        let photo = await withCheckedContinuation { continuation in
            OwnedThread.start("shutterpipe conformance sample") { continuation.resume(returning: samplePhoto(shot: shot)) }
        }
        samples.withLock { $0[shot] = photo }
        return photo
    }

    private static let samples = Mutex<[Int: CapturedPhoto]>([:])

    /// The sink contract:
    /// - `store` returns only when its files are complete: every path a receipt lists
    ///   exists with exactly the size it says;
    /// - an archival sink's receipt lists every file of the photo (RAW and JPEG);
    /// - nothing stored earlier is overwritten (what a location held at an earlier return
    ///   is still there; appending is fine);
    /// - `begin`, `store`, `observe` and `end` never block the pool;
    /// - with `failing`, a sink made to fail (aimed at an unwritable folder, say), the
    ///   failure is a ``ShutterError`` with a storage or permission cause.
    public static func checkSink(_ make: @Sendable () throws -> any PhotoSink,
                                 failing: (@Sendable () throws -> any PhotoSink)? = nil) async -> [String] {
        var problems: [String] = []
        let calls = WatchedCalls()
        do {
            let sink = try make()
            try await calls.run("begin") { try await sink.begin() }
            var earlier: [String: Data] = [:]
            var listedAsPhotos: [String: Int] = [:]
            for shot in 1...2 {
                let photo = await preparedSample(shot: shot)
                let context = ShotContext(session: "conformance", shot: ShotID(run: "conformance", number: shot), captureTime: Date(), camera: "conformance", trigger: "kit")
                let receipt = try await calls.run("store") { try await sink.store(photo, context: context) }
                problems += receiptProblems(receipt, for: photo, role: sink.role)
                for file in receipt.files {
                    if let first = listedAsPhotos[file.location] {
                        problems.append("'\(file.location)' is listed as a file of photo \(first) and of photo \(shot): a file of the sink's own that every photo is written into belongs in the receipt's records, or every photoSuccess lists it as the photo's")
                    } else {
                        listedAsPhotos[file.location] = shot
                    }
                }
                for file in receipt.files + receipt.records where file.location.hasPrefix("/") {
                    guard let now = FileManager.default.contents(atPath: file.location) else { continue }
                    if let before = earlier[file.location], !now.starts(with: before) {
                        problems.append("'\(file.location)' was overwritten: what an earlier store put there is gone")
                    }
                    earlier[file.location] = now
                }
                var observed = ShutterAnswer(request: TriggerEvent(.capture), state: .photoSuccess, stored: receipt.files, shot: ShotID(run: "conformance", number: shot))
                observed.records = receipt.records
                let answer = observed
                try await calls.run("observe") { await sink.observe(answer) }
            }
            try await calls.run("end") { await sink.end() }
        } catch {
            problems.append("a sink that should work failed: \(error)")
        }
        if let failing {
            do {
                let sink = try failing()
                let photo = await preparedSample(shot: 1)
                _ = try await calls.run("store") {
                    try await sink.store(photo, context: ShotContext(session: "conformance", shot: ShotID(run: "conformance", number: 1), captureTime: Date(), camera: "c", trigger: "kit"))
                }
                problems.append("a sink made to fail reported success")
            } catch let error as ShutterError {
                if ![FailureCause.storageUnavailable, .permissionDenied].contains(error.cause) {
                    problems.append("a storage failure carried cause \(error.cause.rawValue), not storageUnavailable or permissionDenied")
                }
            } catch {
                problems.append("a failure was not a ShutterError (it becomes cause 'unexpected'): \(error)")
            }
        }
        return calls.problems + problems
    }

    /// What is wrong with a receipt: files missing from an archival sink's receipt, and
    /// listed paths that do not hold what the receipt says.
    static func receiptProblems(_ receipt: SinkReceipt, for photo: CapturedPhoto, role: SinkRole) -> [String] {
        var problems: [String] = []
        if role == .archival {
            let missing = receipt.filesMissing(from: photo)
            if !missing.isEmpty {
                problems.append("an archival sink's receipt must list every file of the photo with its size; it misses \(missing.joined(separator: ", ")) (the shot would stay on the card, answered photoFailed)")
            }
        }
        for file in receipt.files + receipt.records where file.location.hasPrefix("/") {
            let size = (try? FileManager.default.attributesOfItem(atPath: file.location)[.size] as? Int) ?? nil
            if size == nil { problems.append("store returned before '\(file.location)' existed") }
            if let size, size != file.byteCount { problems.append("'\(file.location)' has \(size) bytes at return, the receipt says \(file.byteCount)") }
        }
        return problems
    }

    /// The backend contract: prepare, capture (at least one non-empty file), finish and
    /// stop, each within its time and without blocking the pool; with `slow`, a backend
    /// whose capture takes long, a cancelled capture ends within two seconds (timed where
    /// the capture runs, so a loaded machine's starved pool does not count against it).
    public static func checkBackend(_ backend: any CaptureBackend, slow: (any CaptureBackend)? = nil) async -> [String] {
        var problems: [String] = []
        let calls = WatchedCalls()
        let context = BackendContext(log: .discarding) { _ in }
        do {
            try await calls.run("prepare") { try await backend.prepare(context) }
            let photo = try await calls.run("capture") { try await backend.capture() }
            if photo.files.isEmpty || photo.files.contains(where: { $0.data.isEmpty }) { problems.append("capture returned no file, or an empty one") }
            try await calls.run("finish") { await backend.finish(photo, stored: true) }
            try await calls.run("stop") { await backend.stop() }
        } catch {
            problems.append("the backend failed its basic cycle: \(error)")
        }
        if let slow {
            do {
                try await slow.prepare(context)
                // The capture runs on the watched thread, which stamps when it began and when
                // it returned: the two seconds are the backend's, not a starved pool's.
                let began = Moment(), returned = Moment()
                let capture = Task { try await calls.watch.run { began.stamp(); defer { returned.stamp() }; return try await slow.capture() } }
                _ = try await withDeadline(.seconds(30), "the capture to begin") { await began.reached() }
                let cancelled = ContinuousClock.now
                capture.cancel()
                let ended = try? await withDeadline(.seconds(30), "a cancelled capture") { _ = try? await capture.value; return true }
                if ended != true {
                    problems.append("a cancelled capture did not end within 30 s: capture must honour cancellation")
                } else if let at = returned.value, at - cancelled > .seconds(2) {
                    problems.append("a cancelled capture ended \(formatDuration(at - cancelled)) after being cancelled; within 2 s is the contract")
                }
                await slow.stop()
            } catch {
                problems.append("the slow backend failed to prepare: \(error)")
            }
        }
        return calls.problems + problems
    }

    /// The contract of a backend whose photos arrive by themselves (a hot folder; a
    /// camera's own shutter button): after `prepare`, `stimulate` (writing a file into the
    /// folder, say) makes it hand a photo with at least one non-empty file to
    /// ``BackendContext/deliver(_:)`` within 30 s; a backend that takes no captures
    /// (`takesCaptures: false`) refuses `capture` with a ``ShutterError`` within 10 s (its
    /// cause reaches the trigger); `finish` and `stop` end; none blocks the pool.
    public static func checkDeliveringBackend(_ backend: any CaptureBackend, takesCaptures: Bool,
                                              stimulate: @Sendable () async throws -> Void) async -> [String] {
        var problems: [String] = []
        let calls = WatchedCalls()
        let delivered = Mutex<[CapturedPhoto]>([])
        let context = BackendContext(log: .discarding) { photo in delivered.withLock { $0.append(photo) } }
        do {
            try await calls.run("prepare") { try await backend.prepare(context) }
            try await stimulate()
            let deadline = ContinuousClock.now + .seconds(30)
            while delivered.withLock({ $0.isEmpty }) && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            if let photo = delivered.withLock({ $0.first }) {
                if photo.files.isEmpty || photo.files.contains(where: { $0.data.isEmpty }) { problems.append("a delivered photo had no file, or an empty one") }
                try await calls.run("finish") { await backend.finish(photo, stored: true) }
            } else {
                problems.append("no photo was delivered within 30 s of the stimulus")
            }
            if !takesCaptures {
                do {
                    _ = try await withDeadline(.seconds(10), "a refused capture") { try await backend.capture() }
                    problems.append("a backend that takes no captures returned a photo from capture")
                } catch let error as ShutterError where error.cause == .timeout {
                    problems.append("a backend that takes no captures must refuse capture at once; \(error.message)")
                } catch is ShutterError {
                } catch {
                    problems.append("a refused capture must throw a ShutterError (its cause reaches the trigger), not \(error)")
                }
            }
            try await calls.run("stop") { await backend.stop() }
        } catch {
            problems.append("the backend failed its cycle: \(error)")
        }
        return calls.problems + problems
    }

    /// The trigger contract: while it runs, `stimulate` (something that makes the device
    /// send, such as writing to its input) produces events; each is synced an answer;
    /// neither `run` nor `sync` blocks the pool; and cancelling `run` ends it within
    /// three seconds (timed where `run` runs; one that never ends is caught at 30 s).
    public static func checkTrigger(_ trigger: any TriggerSource, expecting count: Int = 1,
                                    stimulate: @Sendable () async throws -> Void) async -> [String] {
        var problems: [String] = []
        let sent = Received()
        let watch = PoolWatch(), runWatch = PoolWatch()
        // `run` stamps when it began and when it returned, on the watched thread: the
        // three seconds after a cancel are the trigger's, not a starved pool's.
        let began = Moment(), returned = Moment()
        let run = Task {
            try await runWatch.run {
                began.stamp()
                defer { returned.stamp() }
                try await trigger.run(delivering: EventChannel { event in sent.append(event) })
            }
        }
        do {
            _ = try await withDeadline(.seconds(30), "run to begin") { await began.reached() }
            try await stimulate()
            let deadline = ContinuousClock.now + .seconds(30)
            while sent.count < count && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            let events = sent.all
            if events.count < count { problems.append("\(events.count) event(s) arrived, expected \(count)") }
            for event in events {
                let answer = ShutterAnswer(request: event, state: event.event == .capture ? .photoSuccess : .enteredPhotoMode)
                let (_, held) = try await withDeadline(.seconds(30), "sync") { try await watch.run { await answer.deliver(to: trigger) } }
                if held > PoolWatch.limit { problems.append("sync blocked a thread of the cooperative pool for \(formatDuration(held))") }
            }
        } catch {
            problems.append("the trigger failed: \(error)")
        }
        let cancelled = ContinuousClock.now
        run.cancel()
        let ended = try? await withDeadline(.seconds(30), "a cancelled trigger") { try? await run.value }
        if ended == nil {
            problems.append("run did not return within 30 s of being cancelled: it must honour cancellation")
        } else if let at = returned.value, at - cancelled > .seconds(3) {
            problems.append("run returned \(formatDuration(at - cancelled)) after being cancelled; within 3 s is the contract")
        }
        if let (_, held) = ended ?? nil, held > PoolWatch.limit {
            problems.append("run blocked a thread of the cooperative pool for \(formatDuration(held))")
        }
        return problems
    }
}

/// A moment a plugin call reached (it began, it returned), stamped where the call runs.
private final class Moment: Sendable {
    private let instant = Mutex<ContinuousClock.Instant?>(nil)
    func stamp() { instant.withLock { $0 = $0 ?? .now } }
    var value: ContinuousClock.Instant? { instant.withLock { $0 } }
    /// Returns once stamped (polled: the stamp comes from another thread), or cancelled
    /// (a cancelled Task.sleep throws at once: without the check, the loop would spin one
    /// of the pool's threads for good once its deadline had cancelled it).
    func reached() async {
        while value == nil && !Task.isCancelled { try? await Task.sleep(for: .milliseconds(2)) }
    }
}

private final class Received: Sendable {
    private let events = Mutex<[TriggerEvent]>([])
    func append(_ event: TriggerEvent) { events.withLock { $0.append(event) } }
    var all: [TriggerEvent] { events.withLock { $0 } }
    var count: Int { events.withLock { $0.count } }
}

/// Plugin calls under the kit's watch: each runs on a watched thread under a 30 s deadline,
/// and one that held its thread longer than ``PoolWatch/limit`` is a problem.
private final class WatchedCalls: Sendable {
    let watch = PoolWatch()
    private let found = Mutex<[String]>([])

    var problems: [String] { found.withLock { $0 } }

    func run<T: Sendable>(_ what: String, _ work: @escaping @Sendable () async throws -> T) async throws -> T {
        // The deadline outside, the watch inside: the deadline runs its operation in a
        // task of its own, which would not keep an executor preference set around it.
        let (result, held) = try await withDeadline(.seconds(30), what) { [watch] in try await watch.run { try await work() } }
        if held > PoolWatch.limit { found.withLock { $0.append("\(what) blocked a thread of the cooperative pool for \(formatDuration(held))") } }
        return result
    }
}
