import Dispatch
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// Records every shot of a session in the catalogue (docs/catalogue.md).
///
/// A processing sink and a ``SessionObserver``: it keeps no bytes, and it sees every
/// answer, remote and camera-button shots alike. Its `store` only notes which camera took
/// the shot; the answer, which comes once the photo is durable, is queued for the
/// writer thread (``CatalogueWriter``). Nothing here waits for the catalogue, so a slow,
/// full or broken catalogue never delays or fails a shot.
///
/// It also offers the catalogue to the session's plugins (``ShotCatalogue``, through
/// ``SessionView/catalogue``): reads and marks go to a ``SessionCatalogue`` on a
/// connection and a thread of their own.
public final class CatalogueRecorder: PhotoSink, SessionObserver, ShotCatalogue {
    /// Where the catalogue is and what it indexes.
    public struct Options: Sendable {
        /// The catalogue file.
        public var path: String
        /// The folders whose photos it indexes (the files sinks' folders).
        public var folders: [String]
        /// How sidecars are named (the files sink's `sidecarName`).
        public var naming: SidecarNaming

        /// Ratings and labels also go into JPEGs themselves (`shots rate` reads it from the
        /// catalogue).
        public var marksInJPEG: Bool
        /// The socket marks reach the session through (its socket trigger's), written in its
        /// claim on the catalogue (``SessionClaim``); nil when it has none.
        public var sessionSocket: String?

        public init(path: String, folders: [String], naming: SidecarNaming = .append, marksInJPEG: Bool = false, sessionSocket: String? = nil) {
            self.path = path
            self.folders = folders
            self.naming = naming
            self.marksInJPEG = marksInJPEG
            self.sessionSocket = sessionSocket
        }
    }

    /// The name the catalogue's folder has next to the photos.
    public static let folderName = ".shutterpipe"
    /// The catalogue file in that folder.
    public static let fileName = "catalogue.sqlite"

    /// The default catalogue for photos stored in `folder`.
    public static func defaultPath(photosIn folder: String) -> String {
        "\(folder)/\(folderName)/\(fileName)"
    }

    public let options: Options
    private let session: String
    private let log: Logger
    private let cameras = Mutex<[ShotID: String]>([:])
    /// Each stored shot's place in a sequence, until its answer; and the runs of each
    /// sequence so far (``SequenceRuns``).
    private let frames = Mutex<[ShotID: SequenceFrame]>([:])
    private let runs = Mutex(SequenceRuns())
    /// The session's writer, from `begin` to `end`.
    private let writer: WriterSlot
    private final class WriterSlot: Sendable { let current = Mutex<CatalogueWriter?>(nil) }
    private let claim = Mutex<SessionClaim?>(nil)

    private let reads: SessionCatalogue
    private let observers = Mutex<[@Sendable (CatalogueChange) -> Void]>([])
    /// Copies whose files were not recorded yet when they were reported.
    private let waitingCopies = Mutex<[(String, FileCopy)]>([])

    public init(options: Options, session: String, log: Logger) {
        self.options = options
        self.session = session
        self.log = log
        let writer = WriterSlot()
        self.writer = writer
        // Reads wait for the writer's first open: a page asking at the session's start sees
        // the catalogue reconciled, never one half made.
        self.reads = SessionCatalogue(path: Catalogue.absolute(options.path)) { done in
            guard let current = writer.current.withLock({ $0 }) else { return done() }
            current.opened(done)
        }
    }

    // MARK: The catalogue, for the session's plugins

    public var cacheFolder: String? { reads.cacheFolder }
    public func shot(_ id: Int) async throws -> CatalogueShot? { try await reads.shot(id) }
    public func shot(for shot: ShotID) async throws -> CatalogueShot? { try await reads.shot(for: shot) }
    public func shots(_ filter: ShotFilter) async throws -> [CatalogueShot] { try await reads.shots(filter) }
    public func count(_ filter: ShotFilter) async throws -> Int { try await reads.count(filter) }
    public func mark(_ id: Int, _ changes: [ShotMarkChange]) async throws -> CatalogueShot {
        let shot = try await reads.mark(id, changes)
        log.info("shot \(id) marked: rating \(shot.rating), label \(shot.label ?? "none"), \(shot.pick.word ?? "not picked")")
        tell(.marked(shot))
        return shot
    }

    public func mark(_ id: Int, camera: String?, _ changes: [ShotMarkChange]) async throws -> CatalogueShot {
        let shot = try await reads.mark(id, camera: camera, changes)
        let frame = shot.frame(camera)?.marks ?? shot.marks
        log.info("shot \(id)\(camera.map { " frame \($0)" } ?? "") marked: rating \(frame.rating), label \(frame.label ?? "none"), \(frame.pick.word ?? "not picked")")
        tell(.marked(shot))
        return shot
    }

    public func observe(_ observer: @escaping @Sendable (CatalogueChange) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    /// A copy of a file not recorded yet (a mirror faster than the recorder) waits for
    /// its shot's record, and is written with the next batch.
    public func recordCopy(of path: String, _ copy: FileCopy) async throws {
        if let shot = try await reads.recordCopyNow(of: Catalogue.absolute(path), copy) { return tell(.copied(shot)) }
        waitingCopies.withLock { $0.append((Catalogue.absolute(path), copy)) }
    }

    /// A digest the files sink computed from the bytes it wrote: the writer records it with
    /// its shot, and never reads the file back for it.
    public func recordDigest(of path: String, sha256: String) async {
        writer.current.withLock { $0 }?.digest(sha256, of: Catalogue.absolute(path))
    }

    /// The copies that waited for their shots' records, tried again.
    private func recordWaitingCopies() {
        let waiting = waitingCopies.withLock { list -> [(String, FileCopy)] in defer { list = [] }; return list }
        guard !waiting.isEmpty else { return }
        Task { [self] in
            for (path, copy) in waiting {
                if let shot = try? await reads.recordCopyNow(of: path, copy) { tell(.copied(shot)); continue }
                waitingCopies.withLock { $0.append((path, copy)) }  // its shot is not recorded yet either
            }
        }
    }

    private func tell(_ change: CatalogueChange) {
        for observer in observers.withLock({ $0 }) { observer(change) }
    }

    /// The writer recorded these shots: whoever observes hears each as the catalogue has
    /// it (read on the reads' thread, never the writer's).
    private func recorded(_ identities: [ShotID]) {
        recordWaitingCopies()
        guard !observers.withLock({ $0.isEmpty }) else { return }
        let reads = self.reads
        Task {
            for identity in identities {
                guard let shot = try? await reads.shot(for: identity) else { continue }
                tell(.recorded(shot))
            }
        }
    }

    public var role: SinkRole { .processing }

    /// Starts the writer thread, which opens and reconciles the catalogue on its own time.
    /// Never fails: a session runs without its catalogue rather than not at all.
    public func begin() async throws {
        let settings = CatalogueWriter.Settings(path: Catalogue.absolute(options.path), folders: options.folders.map(Catalogue.absolute),
                                                naming: options.naming, marksInJPEG: options.marksInJPEG, session: session)
        let log = self.log
        let writer = self.writer.current.withLock { current in
            if current == nil { current = CatalogueWriter(settings: settings, log: log) { [weak self] in self?.recorded($0) } }
            return current!
        }
        // The first shot waits only for the listing of the photos on disk (milliseconds
        // for thousands), not for SQLite; a disk that hangs holds the start ten seconds
        // at most.
        if await !waitForCallback(within: .seconds(10), { writer.listed($0) }) {
            log.warning("catalogue: listing the photos in \(options.folders.joined(separator: ", ")) took over 10 s; the session starts without waiting for it")
        }
        // Marks on this catalogue go through this session from now on (``SessionClaim``).
        let (path, socket) = (Catalogue.absolute(options.path), options.sessionSocket)
        let folder = PathName.parent(path)
        if FileManager.default.fileExists(atPath: folder), Catalogue.folderProblem(folder.isEmpty ? "." : folder) == nil {
            claim.withLock { $0 = SessionClaim.claim(path, socket: socket.map(Catalogue.absolute)) }
        }
    }

    /// Notes which camera took the shot, for its record.
    public func store(_ photo: CapturedPhoto, context: ShotContext) async throws -> SinkReceipt {
        cameras.withLock { $0[context.shot] = photo.camera }
        if let frame = context.sequence { frames.withLock { $0[context.shot] = frame } }
        return SinkReceipt(files: [])
    }

    /// Queues the record of every answered capture.
    public func observe(_ answer: ShutterAnswer, trigger: String) async {
        guard answer.request.event == .capture, let shot = answer.shot else { return }
        let camera = cameras.withLock { $0.removeValue(forKey: shot) }
        let place = frames.withLock { $0.removeValue(forKey: shot) }.map { frame in runs.withLock { $0.place(of: frame) } }
        // A shot no trigger asked for is recorded by how it came: "camera" for the camera's
        // button, "card import" or "hot folder" for one its backend brought in.
        let by = trigger == "camera" ? answer.request.origin.flatMap { $0 == "camera button" ? nil : $0 } ?? trigger : trigger
        writer.current.withLock { $0 }?.enqueue([PendingShot(answer: answer, trigger: by, camera: camera, observed: Date(), sequence: place)])
    }

    /// Writes what is queued and closes, waiting at most ten seconds (a hung disk must not
    /// hold the session's exit; what is left is recorded at the next start).
    public func end() async {
        guard let writer = writer.current.withLock({ current -> CatalogueWriter? in defer { current = nil }; return current }) else { return }
        if await !waitForCallback(within: .seconds(10), { writer.finish($0) }) {
            log.warning("catalogue: still writing after 10 s; leaving it (the next start records what is missing)")
        }
        // Every shot is recorded now: the copies that waited for theirs go in.
        let waiting = waitingCopies.withLock { list -> [(String, FileCopy)] in defer { list = [] }; return list }
        var lost = 0
        for (path, copy) in waiting where (try? await reads.recordCopyNow(of: path, copy)) == nil { lost += 1 }
        if lost > 0 { log.warning("\(lost) copy(ies) of files the catalogue has no record of were not recorded") }
        claim.withLock { $0 = nil }
    }
}
