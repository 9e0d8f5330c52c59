import Dispatch
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// The catalogue as a running session offers it to plugins (``SessionView/catalogue``):
/// reads and marks on a connection and a thread of their own, beside the recorder's
/// writer thread (SQLite's WAL journal lets them read while it writes; a write waits
/// for the other's up to five seconds). The connection opens at the first call.
public final class SessionCatalogue: ShotCatalogue {
    private let path: String
    private let queue = BlockingQueue(label: "catalogue-reads")
    private let connection = Mutex<Catalogue?>(nil)
    /// Runs its argument once the catalogue may be opened (a session's writer made it).
    private let ready: (@Sendable (@escaping @Sendable () -> Void) -> Void)?

    /// Reaches the catalogue at `path` (absolute); the first call waits (ten seconds at
    /// most) until `ready` calls back, when given.
    public init(path: String, ready: (@Sendable (@escaping @Sendable () -> Void) -> Void)? = nil) {
        self.path = path
        self.ready = ready
    }

    /// `.cache` beside the catalogue: hidden, so that a catalogue placed among the photos
    /// never has its previews taken for photos by the reconciliation. None when the
    /// catalogue's folder is not this user's alone (``Catalogue/folderProblem(_:)``).
    public var cacheFolder: String? {
        let folder = PathName.parent(path)
        return Catalogue.folderProblem(folder.isEmpty ? "." : folder) == nil ? folder + "/.cache" : nil
    }

    public func shot(_ id: Int) async throws -> CatalogueShot? {
        try await withCatalogue { try $0.shot(id) }
    }

    public func shot(for shot: ShotID) async throws -> CatalogueShot? {
        try await withCatalogue { try $0.shot(key: shot) }
    }

    public func shots(_ filter: ShotFilter) async throws -> [CatalogueShot] {
        try await withCatalogue { try $0.shots(filter) }
    }

    public func count(_ filter: ShotFilter) async throws -> Int {
        try await withCatalogue { try $0.count(filter) }
    }

    /// Changes are reported by the session's recorder (``CatalogueRecorder``), which sees
    /// the writes; this reader alone hears of none.
    public func observe(_ observer: @escaping @Sendable (CatalogueChange) -> Void) {}

    public func mark(_ id: Int, _ changes: [ShotMarkChange]) async throws -> CatalogueShot {
        try await withCatalogue { try CatalogueMarker.mark(id, changes, in: $0).shot }
    }

    public func mark(_ id: Int, camera: String?, _ changes: [ShotMarkChange]) async throws -> CatalogueShot {
        try await withCatalogue { try CatalogueMarker.mark(id, frames: .camera(camera), changes, in: $0).shot }
    }

    /// Records a copy; the shot as it is now, `nil` when the file is not recorded yet.
    func recordCopyNow(of path: String, _ copy: FileCopy) async throws -> CatalogueShot? {
        try await withCatalogue { catalogue in try catalogue.recordCopy(of: path, copy).flatMap { try catalogue.shot($0) } }
    }

    /// Runs `work` on the catalogue's thread, opening it first; a failure to open or
    /// read is a `storageUnavailable` naming the file.
    private func withCatalogue<T: Sendable>(_ work: @escaping @Sendable (Catalogue) throws -> T) async throws -> T {
        try await queue.run { [self] in
            if let ready, connection.withLock({ $0 == nil }) {
                let made = DispatchSemaphore(value: 0)
                ready { made.signal() }
                _ = made.wait(timeout: Duration.seconds(10).fromNow)  // this queue's own thread
            }
            do {
                // Only this queue's thread takes the lock: holding it for the work costs nothing.
                return try connection.withLock { current throws -> T in
                    if current == nil { current = try Catalogue.open(at: path, create: false) }
                    return try work(current!)
                }
            } catch let error as ShutterError {
                throw error
            } catch {
                connection.withLock { $0 = nil }  // opened again at the next call
                throw ShutterError(.storageUnavailable, "catalogue '\(path)': \(error)", fix: "check the disk it is on; the photos and their sidecars are unaffected")
            }
        }
    }
}
