#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeConformance
import ShutterPipeKit
import ShutterPipeSupport
import TestSupport
import Testing

/// Sinks that break the contract in one way each: the kit must name the breach.
private struct EmptyReceiptArchive: PhotoSink {
    var role: SinkRole { .archival }
    func store(_ photo: CapturedPhoto, context: ShotContext) async throws -> SinkReceipt { SinkReceipt(files: []) }
}

private struct JPEGOnlyArchive: PhotoSink {
    let folder: String
    var role: SinkRole { .archival }
    func store(_ photo: CapturedPhoto, context: ShotContext) async throws -> SinkReceipt {
        let file = photo.files[0]
        let path = "\(folder)/\(context.shotNumber)-\(file.name)"
        try file.data.writeTestFile(path)
        return SinkReceipt(files: [StoredFile(location: path, byteCount: file.data.count, cameraFile: file.name)])
    }
}

private struct LyingSizeArchive: PhotoSink {
    let folder: String
    var role: SinkRole { .archival }
    func store(_ photo: CapturedPhoto, context: ShotContext) async throws -> SinkReceipt {
        SinkReceipt(files: try photo.files.map { file in
            let path = "\(folder)/\(context.shotNumber)-\(file.name)"
            try file.data.prefix(10).writeTestFile(path)
            return StoredFile(location: path, byteCount: file.data.count, cameraFile: file.name)
        })
    }
}

/// A processing sink that appends to a log of its own and lists it as each photo's file
/// (`records` says `true`: it returns it as a record instead, as it should).
private struct LogSink: PhotoSink {
    let path: String
    let asRecord: Bool
    func store(_ photo: CapturedPhoto, context: ShotContext) async throws -> SinkReceipt {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        defer { try? handle.close() }
        let end = try handle.seekToEnd()
        try handle.write(contentsOf: Data("shot \(context.shotNumber)\n".utf8))
        let log = StoredFile(location: path, byteCount: Int(end) + "shot \(context.shotNumber)\n".utf8.count)
        return asRecord ? SinkReceipt(files: [], records: [log]) : SinkReceipt(files: [log])
    }
}

private struct PoolBlockingSink: PhotoSink {
    func store(_ photo: CapturedPhoto, context: ShotContext) async throws -> SinkReceipt {
        if context.shotNumber == 1 { _ = usleep(5_000_000) }  // a blocking wait where the pool runs it
        return SinkReceipt(files: [])
    }
}

private actor PoolBlockingActorSink: PhotoSink {
    func store(_ photo: CapturedPhoto, context: ShotContext) async throws -> SinkReceipt {
        if context.shotNumber == 1 { _ = usleep(3_000_000) }
        return SinkReceipt(files: [])
    }
}

private struct QueuedSink: PhotoSink {
    let queue = BlockingQueue(label: "conformance test")
    func store(_ photo: CapturedPhoto, context: ShotContext) async throws -> SinkReceipt {
        await queue.run { _ = usleep(3_000_000) }  // the same wait, on a thread of its own
        return SinkReceipt(files: [])
    }
}

/// A trigger that, each time it runs, starts a reading thread and opens a descriptor, and
/// forgets both when cancelled: it passes `checkTrigger`, but not the cleanup check.
private final class LeakingTrigger: TriggerSource, @unchecked Sendable {
    static let gate = DispatchSemaphore(value: 0)  // never signalled while the tests run: the thread waits for good
    func run(delivering events: EventChannel) async throws {
        _ = open("/dev/null", O_RDONLY)
        Thread { Self.gate.wait() }.start()
        while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(20)) }
    }
}

/// A trigger that reads on a thread of its own and stops it, closing its descriptor, when cancelled.
private struct TidyTrigger: TriggerSource {
    func run(delivering events: EventChannel) async throws {
        let descriptor = open("/dev/null", O_RDONLY)
        defer { close(descriptor) }
        let stop = DispatchSemaphore(value: 0), stopped = DispatchSemaphore(value: 0)
        Thread { stop.wait(); stopped.signal() }.start()
        while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(20)) }
        stop.signal()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in DispatchQueue.global().async { stopped.wait(); done.resume() } }
    }
}

@Suite("The conformance kit catches what breaks the contract", .timeLimit(.minutes(3)))
struct KitCatchesViolationsTests {
    @Test("an archival sink whose receipt is empty")
    func emptyReceipt() async {
        let problems = await Conformance.checkSink { EmptyReceiptArchive() }
        #expect(problems.contains { $0.contains("receipt must list every file of the photo") && $0.contains("CONF0001.JPG, CONF0001.CR2") }, "\(problems)")
    }

    @Test("an archival sink that keeps the JPEG of a RAW+JPEG shot and drops the RAW")
    func rawDropped() async {
        let folder = TemporaryDirectory("conform-jpeg-only").keep()
        let problems = await Conformance.checkSink { JPEGOnlyArchive(folder: folder.path) }
        #expect(problems.contains { $0.contains("it misses CONF0001.CR2") }, "\(problems)")
        #expect(!problems.contains { $0.contains("CONF0001.JPG") })
    }

    @Test("a receipt that states a size the file does not have")
    func lyingSize() async {
        let folder = TemporaryDirectory("conform-lying").keep()
        let problems = await Conformance.checkSink { LyingSizeArchive(folder: folder.path) }
        #expect(problems.contains { $0.contains("has 10 bytes at return, the receipt says") }, "\(problems)")
    }

    @Test("a processing sink that lists its own log as each photo's file is named; one that returns it as a record conforms")
    func ownFileAsPhoto() async throws {
        let folder = TemporaryDirectory("conform-own-file").keep()
        let path = folder.file("log.txt")
        try Data().writeTestFile(path)
        let problems = await Conformance.checkSink { LogSink(path: path, asRecord: false) }
        #expect(problems.contains { $0.contains("'\(path)' is listed as a file of photo 1 and of photo 2") && $0.contains("records") }, "\(problems)")
        #expect(await Conformance.checkSink { LogSink(path: path, asRecord: true) }.isEmpty)
    }

    @Test("a sink that blocks the cooperative pool for 5 s in store, and one that does it inside an actor")
    func poolBlocking() async {
        let problems = await Conformance.checkSink { PoolBlockingSink() }
        #expect(problems.contains { $0.hasPrefix("store blocked a thread of the cooperative pool for 5") }, "\(problems)")
        let actorProblems = await Conformance.checkSink { PoolBlockingActorSink() }
        #expect(actorProblems.contains { $0.hasPrefix("store blocked a thread of the cooperative pool for 3") }, "\(actorProblems)")
    }

    @Test("a trigger that leaks a thread and a descriptor each time it is stopped is named, with both; one that cleans up conforms")
    func leakingTrigger() async {
        let problems = await Conformance.checkTriggerCleansUp(cycles: 12) { LeakingTrigger() }
        #expect(problems.contains { $0.contains("thread(s) more after 11 runs") } && problems.contains { $0.contains("descriptor(s) more after 11 runs") }, "\(problems)")
        // The check counts the whole process's threads and descriptors: scripts/test-runner
        // runs this test by itself (Tests/run-alone.txt).
        let tidy = await Conformance.checkTriggerCleansUp(cycles: 12) { TidyTrigger() }
        #expect(tidy.isEmpty, "\(tidy)")
    }

    @Test("a processing sink with an empty receipt, and one that waits on a thread of its own, conform")
    func conformingSinks() async {
        #expect(await Conformance.checkSink { QueuedSink() }.isEmpty)
    }
}
