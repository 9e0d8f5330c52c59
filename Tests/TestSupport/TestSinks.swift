#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// A sink that records what it stores, and can fail or be slow.
public final class RecordingSink: PhotoSink {
    private let failure: ShutterError?
    private let delay: Duration
    private let probe: OverlapProbe?
    private let stored = Mutex<[(CapturedPhoto, ShotContext)]>([])
    private let concurrency = Mutex<(now: Int, most: Int)>((0, 0))
    private let label: String
    private let timeline: Timeline?
    private let gate: Gate?
    public let role: SinkRole

    /// A sink named `label` that fails every store with `failure`, if given. Archival by
    /// default: its receipt lists every file of the photo. Its stores are noted on
    /// `timeline` ("store 3 began", "store 3 ended"). Each store waits at `gate`, if given,
    /// until the test lets it through.
    public init(_ label: String = "recording", failure: ShutterError? = nil, delay: Duration = .zero, probe: OverlapProbe? = nil,
                role: SinkRole = .archival, timeline: Timeline? = nil, gate: Gate? = nil) {
        self.gate = gate
        self.timeline = timeline
        self.role = role
        self.probe = probe
        self.label = label
        self.failure = failure
        self.delay = delay
    }

    /// The shot contexts stored so far.
    public var contexts: [ShotContext] { stored.withLock { $0.map(\.1) } }
    /// The photos stored so far.
    public var photos: [CapturedPhoto] { stored.withLock { $0.map(\.0) } }
    /// The most stores that were ever running at once.
    public var maximumConcurrentStores: Int { concurrency.withLock { $0.most } }
    /// The answers the sink observed, in order.
    public var observed: [ShutterAnswer] { observations.withLock { $0 } }
    private let observations = Mutex<[ShutterAnswer]>([])

    public func observe(_ answer: ShutterAnswer) async {
        observations.withLock { $0.append(answer) }
    }

    public func store(_ photo: CapturedPhoto, context: ShotContext) async throws -> SinkReceipt {
        concurrency.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
        probe?.storeBegan()
        timeline?.note("store \(context.shotNumber) began")
        defer { concurrency.withLock { $0.now -= 1 }; probe?.storeEnded(); timeline?.note("store \(context.shotNumber) ended") }
        if delay > .zero { try await Task.sleep(for: delay) }
        try await gate?.pass()
        if let failure { throw failure }
        stored.withLock { $0.append((photo, context)) }
        guard role == .archival else { return SinkReceipt(files: []) }
        return SinkReceipt(files: photo.files.enumerated().map { index, file in
            StoredFile(location: "\(label)/\(context.shotNumber)" + (index == 0 ? "" : "/\(file.name)"), sequence: context.shotNumber,
                       byteCount: file.data.count, cameraFile: file.name)
        })
    }
}

/// An archival sink that stores only the first file of each photo and says so: its
/// receipt misses the rest, as a sink with a bug would.
public final class ForgetfulSink: PhotoSink {
    public init() {}
    public var role: SinkRole { .archival }
    public func store(_ photo: CapturedPhoto, context: ShotContext) async throws -> SinkReceipt {
        SinkReceipt(files: photo.files.prefix(1).map { StoredFile(location: "forgetful/\($0.name)", byteCount: $0.data.count, cameraFile: $0.name) })
    }
}
