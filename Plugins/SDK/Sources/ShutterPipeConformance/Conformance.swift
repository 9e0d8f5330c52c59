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
public enum Conformance {
    /// A photo to feed sinks: a synthetic JPEG of about `bytes` bytes.
    public static func samplePhoto(shot: Int = 1, detail: Int = 4) -> CapturedPhoto {
        CapturedPhoto(files: [CapturedFile(name: String(format: "CONF%04d.JPG", shot),
                                           data: SyntheticJPEG.make(width: 1600, height: 1200, shot: shot, detail: detail))],
                      camera: "conformance")
    }

    /// The sink contract: `store` returns only when its files are complete (every path it
    /// reports exists with the size it says), nothing stored earlier is overwritten (what a
    /// location held at an earlier return is still there; appending is fine),
    /// `begin`/`end` work, the cooperative pool is not blocked while it stores, and (with
    /// `failing`, a sink made to fail, for example aimed at an unwritable folder) a
    /// failure is a ``ShutterError`` with a storage or permission cause.
    public static func checkSink(_ make: @Sendable () throws -> any PhotoSink,
                                 failing: (@Sendable () throws -> any PhotoSink)? = nil) async -> [String] {
        var problems: [String] = []
        do {
            let sink = try make()
            try await sink.begin()
            var earlier: [String: Data] = [:]
            for shot in 1...2 {
                let photo = samplePhoto(shot: shot)
                let context = ShotContext(session: "conformance", shotNumber: shot, captureTime: Date(), camera: "conformance", trigger: "kit")
                let (receipt, stall) = try await whileWatchingThePool { try await sink.store(photo, context: context) }
                if stall > .seconds(4) { problems.append("store blocked the cooperative pool for \(formatDuration(stall))") }
                for file in receipt.files where file.location.hasPrefix("/") {
                    let size = (try? FileManager.default.attributesOfItem(atPath: file.location)[.size] as? Int) ?? nil
                    if size == nil { problems.append("store returned before '\(file.location)' existed") }
                    if let size, size != file.byteCount { problems.append("'\(file.location)' has \(size) bytes at return, the receipt says \(file.byteCount)") }
                }
                for file in receipt.files where file.location.hasPrefix("/") {
                    guard let now = FileManager.default.contents(atPath: file.location) else { continue }
                    if let before = earlier[file.location], !now.starts(with: before) {
                        problems.append("'\(file.location)' was overwritten: what an earlier store put there is gone")
                    }
                    earlier[file.location] = now
                }
            }
            await sink.end()
        } catch {
            problems.append("a sink that should work failed: \(error)")
        }
        if let failing {
            do {
                let sink = try failing()
                _ = try await sink.store(samplePhoto(), context: ShotContext(session: "conformance", shotNumber: 1, captureTime: Date(), camera: "c", trigger: "kit"))
                problems.append("a sink made to fail reported success")
            } catch let error as ShutterError {
                if ![FailureCause.storageUnavailable, .permissionDenied].contains(error.cause) {
                    problems.append("a storage failure carried cause \(error.cause.rawValue), not storageUnavailable or permissionDenied")
                }
            } catch {
                problems.append("a failure was not a ShutterError (it becomes cause 'unexpected'): \(error)")
            }
        }
        return problems
    }

    /// The backend contract: prepare, capture (at least one non-empty file), finish and
    /// stop, each within its time; with `slow`, a backend whose capture takes long, a
    /// cancelled capture ends within two seconds; the pool is not blocked meanwhile.
    public static func checkBackend(_ backend: any CaptureBackend, slow: (any CaptureBackend)? = nil) async -> [String] {
        var problems: [String] = []
        let context = BackendContext(log: .discarding) { _ in }
        do {
            try await withDeadline(.seconds(30), "prepare") { try await backend.prepare(context) }
            let (photo, stall) = try await whileWatchingThePool {
                try await withDeadline(.seconds(30), "capture") { try await backend.capture() }
            }
            if photo.files.isEmpty || photo.files.contains(where: { $0.data.isEmpty }) { problems.append("capture returned no file, or an empty one") }
            if stall > .seconds(4) { problems.append("capture blocked the cooperative pool for \(formatDuration(stall))") }
            try await withDeadline(.seconds(30), "finish") { await backend.finish(photo, stored: true) }
            try await withDeadline(.seconds(30), "stop") { await backend.stop() }
        } catch {
            problems.append("the backend failed its basic cycle: \(error)")
        }
        if let slow {
            do {
                try await slow.prepare(context)
                let capture = Task { try await slow.capture() }
                try await Task.sleep(for: .milliseconds(50))
                capture.cancel()
                let ended = try? await withDeadline(.seconds(2), "a cancelled capture") { _ = try? await capture.value; return true }
                if ended != true { problems.append("a cancelled capture did not end within 2 s: capture must honour cancellation") }
                await slow.stop()
            } catch {
                problems.append("the slow backend failed to prepare: \(error)")
            }
        }
        return problems
    }

    /// The trigger contract: while it runs, `stimulate` (something that makes the device
    /// send, such as writing to its input) produces events; each is synced an answer; the
    /// pool is not blocked; and cancelling `run` ends it within three seconds.
    public static func checkTrigger(_ trigger: any TriggerSource, expecting count: Int = 1,
                                    stimulate: @Sendable () async throws -> Void) async -> [String] {
        var problems: [String] = []
        let received = Mutex<[TriggerEvent]>([])
        let sent = Received()
        let run = Task { try await trigger.run(delivering: EventChannel { event in sent.append(event) }) }
        do {
            try await Task.sleep(for: .milliseconds(100))
            let (_, stall) = try await whileWatchingThePool {
                try await stimulate()
                let deadline = ContinuousClock.now + .seconds(8)
                while sent.count < count && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            }
            if stall > .seconds(4) { problems.append("the trigger blocked the cooperative pool for \(formatDuration(stall))") }
            let events = sent.all
            if events.count < count { problems.append("\(events.count) event(s) arrived, expected \(count)") }
            for event in events {
                try await withDeadline(.seconds(5), "sync") {
                    await trigger.sync(ShutterAnswer(request: event, state: event.event == .capture ? .photoSuccess : .enteredPhotoMode))
                }
            }
            received.withLock { $0 = events }
        } catch {
            problems.append("the trigger failed: \(error)")
        }
        run.cancel()
        let ended = try? await withDeadline(.seconds(3), "a cancelled trigger") { _ = try? await run.value; return true }
        if ended != true { problems.append("run did not return within 3 s of being cancelled") }
        return problems
    }

    /// Runs `work` while a heartbeat ticks on the cooperative pool; returns the result and
    /// the longest gap between ticks. The checks flag gaps over 4 s: gross blocking, such as
    /// a read or a C call waiting on a device on a pool thread. Shorter stalls have other
    /// causes in a parallel test run (loading shared libraries holds the loader's lock
    /// that the Swift runtime takes on every thread), so they are not held against a plugin.
    static func whileWatchingThePool<T: Sendable>(_ work: @Sendable () async throws -> T) async throws -> (T, Duration) {
        let longest = Mutex<Duration>(.zero)
        let heartbeat = Task.detached {
            var last = ContinuousClock.now
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(5))
                let now = ContinuousClock.now
                longest.withLock { $0 = max($0, now - last) }
                last = now
            }
        }
        defer { heartbeat.cancel() }
        let result = try await work()
        return (result, longest.withLock { $0 })
    }
}

private final class Received: Sendable {
    private let events = Mutex<[TriggerEvent]>([])
    func append(_ event: TriggerEvent) { events.withLock { $0.append(event) } }
    var all: [TriggerEvent] { events.withLock { $0 } }
    var count: Int { events.withLock { $0.count } }
}
