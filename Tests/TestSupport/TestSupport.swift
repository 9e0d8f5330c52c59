#if canImport(Glibc)
import Glibc
#endif
import CTestSupport
import Foundation
import ShutterPipeKit
import Synchronization

/// Makes a write to a pipe or socket whose reader is gone fail with EPIPE instead of
/// killing the test process (as the shutterpipe host does for itself), and installs the
/// cleanup that kills the test's children when the test process (or its runner) ends.
/// Every TestSupport entry point calls it; once is enough, more is harmless.
public func ignoreSIGPIPE() {
    _ = sigpipeIgnored
}

private let sigpipeIgnored: Void = {
    signal(SIGPIPE, SIG_IGN)
    // And, once, what ends the test's children with the test process (or its runner).
    shutterpipe_test_install_cleanup()
    return ()
}()

/// A folder under the system's temporary directory, removed when the value is dropped.
public final class TemporaryDirectory: Sendable {
    /// The folder's path.
    public let path: String

    /// Creates a fresh folder; `inMemory` puts it on tmpfs (`/dev/shm`, where there is
    /// one), for tests that write thousands of files: their fsyncs then cost nothing, and
    /// do not slow the disk under the tests running beside them.
    public init(_ label: String = "test", inMemory: Bool = false) {
        ignoreSIGPIPE()
        let shared = inMemory && FileManager.default.isWritableFile(atPath: "/dev/shm")
        let base = shared ? "/dev/shm" : ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        path = "\(base)/shutterpipe-\(label)-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        leftAtExit.register(path)
    }

    deinit {
        // On a thread of its own: a folder of a few thousand photos takes a second to
        // remove, which on the cooperative pool would stall the tests running beside it.
        let path = self.path
        let remover = Thread {
            _ = try? FileManager.default.removeItem(atPath: path)
            leftAtExit.removed(path)
        }
        remover.name = "shutterpipe test cleanup"
        remover.start()
    }

    /// Keeps the folder for the rest of the test run (for a folder used only through its
    /// path, which would otherwise be removed at once).
    public func keep() -> TemporaryDirectory {
        kept.withLock { $0.append(self) }
        return self
    }

    /// A path inside the folder.
    public func file(_ name: String) -> String { "\(path)/\(name)" }

    /// The names in the folder (or a sub-folder), sorted, hidden ones included.
    public func names(_ subfolder: String? = nil) -> [String] {
        let folder = subfolder.map { "\(path)/\($0)" } ?? path
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }
}

/// The repository root, found from this source file.
public let repositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    while url.path != "/" {
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path),
           FileManager.default.fileExists(atPath: url.appendingPathComponent("Plugins/SDK").path) {
            return url.path
        }
        url.deleteLastPathComponent()
    }
    fatalError("repository root not found above \(#filePath)")
}()

/// A logger that keeps every record, for assertions.
public final class LogRecorder: Sendable {
    private let records = Mutex<[LogRecord]>([])

    /// Creates an empty recorder.
    public init() { ignoreSIGPIPE() }

    /// A logger into this recorder.
    public var logger: Logger { Logger(source: "test") { [self] record in records.withLock { $0.append(record) } } }

    /// The messages logged so far.
    public var messages: [String] { records.withLock { $0.map(\.message) } }
}

/// Waits until `condition` holds, up to `timeout`; returns whether it did. The default is
/// generous because the whole suite runs in parallel on two cores, where a step that takes
/// milliseconds alone can take seconds; a passing wait returns as soon as it holds. A
/// timeout exists to end a wait that would never end, never to judge speed.
public func eventually(timeout: Duration = .seconds(60), _ condition: @Sendable () async -> Bool) async -> Bool {
    await poll(timeout: timeout, condition)
}

private let kept = Mutex<[TemporaryDirectory]>([])

/// Every folder not yet removed: the kept ones, and those whose remover thread the test
/// process's exit would cut short. They go when the process exits, so that a test run
/// leaves nothing behind in /tmp.
private let leftAtExit: LeftAtExit = LeftAtExit()
private let removeLeftAtExit: Void = { atexit { leftAtExit.removeAll() }; return () }()

private final class LeftAtExit: Sendable {
    private let paths = Mutex<Set<String>>([])
    func register(_ path: String) {
        _ = removeLeftAtExit
        paths.withLock { _ = $0.insert(path) }
    }

    func removed(_ path: String) {
        paths.withLock { _ = $0.remove(path) }
    }

    fileprivate func removeAll() {
        for path in paths.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
    }
}

/// Runs CPU-heavy or blocking test work (a fuzz loop, parsing a large listing) on a
/// thread of its own and waits for it without holding a thread: on two cores the
/// cooperative pool has two threads, and a test that holds one for seconds delays the
/// timers and deadlines of every other test running beside it (measured: stalls of up to
/// 7 s in a full run). Record expectations on the result, after it returns.
public func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.name = "shutterpipe test work"
        thread.start()
    }
}

/// Builds a config node from plain values (String, Int, Double, Bool, arrays, and
/// dictionaries, whose keys are taken in sorted order), for plugin option tests.
public func configNode(_ value: Any, file: String = "test.yaml") -> ConfigNode {
    let here = SourceLocation(file: file, line: 1, column: 1)
    switch value {
    case let map as [String: Any]:
        return ConfigNode(.mapping(map.keys.sorted().map {
            ConfigEntry(key: $0, keyLocation: here, value: configNode(map[$0]!, file: file))
        }), at: here)
    case let list as [Any]:
        return ConfigNode(.sequence(list.map { configNode($0, file: file) }), at: here)
    default:
        return ConfigNode(.scalar("\(value)", quoted: value is String), at: here)
    }
}

/// A folder kept after the tests for people to look at (screenshots): under
/// `$SHUTTERPIPE_ARTEFACTS`, else `.build/test-artefacts/` in the checkout, one
/// sub-folder per `name`.
public func artefactsFolder(_ name: String) throws -> String {
    let base = ProcessInfo.processInfo.environment["SHUTTERPIPE_ARTEFACTS"] ?? "\(repositoryRoot)/.build/test-artefacts"
    let folder = "\(base)/\(name)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    return folder
}

/// Where tests keep what a person may want to look at after a run (the end-to-end
/// tests' screenshots): `$SHUTTERPIPE_TEST_ARTEFACTS`, else `.build/test-artefacts` in
/// the repository. `scripts/test` says where, and CI keeps the folder.
public var testArtefactsFolder: String {
    ProcessInfo.processInfo.environment["SHUTTERPIPE_TEST_ARTEFACTS"].flatMap { $0.isEmpty ? nil : $0 } ?? "\(repositoryRoot)/.build/test-artefacts"
}

/// Copies `path` into ``testArtefactsFolder`` as `name` (replacing an earlier run's).
public func keepArtefact(_ path: String, as name: String) throws {
    let folder = testArtefactsFolder
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let target = "\(folder)/\(name)"
    try? FileManager.default.removeItem(atPath: target)
    try copyTestFile(path, to: target)
}
