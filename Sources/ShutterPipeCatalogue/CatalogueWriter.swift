#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Dispatch
import Foundation
import ShutterPipeImaging
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// The catalogue sink's thread: it opens the catalogue, reconciles it with the folders,
/// and records each answered shot, so that no shot ever waits for SQLite, a digest or a
/// slow disk.
///
/// A catalogue that cannot be opened or written costs no shot: the shots wait in memory
/// (the backlog), the failure is logged once, and it is tried again with the next shots
/// and every five seconds; when it works, the backlog is written and the recovery logged. The
/// photos are on disk whatever happens here, and the next start reconciles what a crash
/// left unrecorded.
final class CatalogueWriter: Sendable {
    struct Settings: Sendable {
        var path: String
        var folders: [String]
        var naming: SidecarNaming
        var marksInJPEG: Bool
        var session: String
    }

    private struct State {
        var incoming: [PendingShot] = []
        /// Digests sinks computed (path → SHA-256), not yet taken by the thread.
        var digests: [(String, String)] = []
        var finishing: [@Sendable () -> Void] = []
        /// Waiting for the photos on disk to be listed; `nil` once they were.
        var listing: [@Sendable () -> Void]? = []
        /// Waiting for the first open and reconciliation; `nil` once it ran.
        var opening: [@Sendable () -> Void]? = []
        /// When the last shot was queued.
        var lastArrival: ContinuousClock.Instant?
        /// Whether the thread sleeps with no shot gathering: only then does a shot or a
        /// digest wake it (while shots gather it wakes when their time is up, and takes
        /// what came meanwhile: a burst wakes it a few times, not twice a shot).
        var sleeping = true
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let settings: Settings
    private let log: Logger
    private let recorded: @Sendable ([ShotID]) -> Void
    /// Runs on the thread between the listing and the open (tests hold the open there).
    private let beforeOpening: @Sendable () -> Void

    /// Starts the thread; `recorded` hears the identities of the shots of each write, on
    /// this thread, once they are in the catalogue.
    init(settings: Settings, log: Logger, recorded: @escaping @Sendable ([ShotID]) -> Void = { _ in },
         beforeOpening: @escaping @Sendable () -> Void = {}) {
        self.settings = settings
        self.log = log
        self.recorded = recorded
        self.beforeOpening = beforeOpening
        // At the session's own priority: 10 nice levels down, on a machine whose every core
        // was busy, it got almost no CPU at a session's end, when it writes what is still
        // waiting (docs/reliability.md, run 9). It writes nothing during a burst anyway.
        OwnedThread.start("catalogue") { [self] in loop() }
    }

    /// Runs `done` once the photos already in the folders were listed (and the
    /// catalogue's folder made): the session's shots may land from then on. The
    /// reconciliation takes only those photos, so that a shot stored while the catalogue
    /// opens (creating it, checking it, migrating it) is recorded by its answer, never
    /// imported as a file found on disk; the shots never wait for SQLite.
    func listed(_ done: @escaping @Sendable () -> Void) {
        if state.withLock({ state in state.listing.map { state.listing = $0 + [done] } == nil }) { done() }
    }

    /// Runs `done` once the catalogue was opened and reconciled with the folders (or
    /// failed to be): reads wait for it, so that they never see a catalogue half made.
    func opened(_ done: @escaping @Sendable () -> Void) {
        if state.withLock({ state in state.opening.map { state.opening = $0 + [done] } == nil }) { done() }
    }

    /// Queues shots that arrived together; returns at once.
    func enqueue(_ shots: [PendingShot]) {
        let asleep = state.withLock { state -> Bool in
            state.incoming += shots
            state.lastArrival = .now
            defer { state.sleeping = false }
            return state.sleeping
        }
        if asleep { wake.signal() }
    }

    /// Takes the digest a sink computed for the file at `path` (absolute); returns at once.
    func digest(_ sha256: String, of path: String) {
        let asleep = state.withLock { state -> Bool in
            state.digests.append((path, sha256))
            defer { state.sleeping = false }
            return state.sleeping
        }
        if asleep { wake.signal() }
    }

    /// Writes what is queued (one last try), ends the session's record and stops the
    /// thread; `done` runs then.
    func finish(_ done: @escaping @Sendable () -> Void) {
        state.withLock { $0.finishing.append(done) }
        wake.signal()
    }

    // MARK: The thread

    private func loop() {
        // What is on disk before any shot of the session lands: reconciled with once the
        // catalogue opens (a failed open tried again later too: what was stored since
        // then has its answers waiting in the backlog).
        try? Catalogue.makeFolder(of: settings.path)  // a failure is the open's to report
        let found = Catalogue.photos(in: settings.folders)
        state.withLock { state in defer { state.listing = nil }; return state.listing ?? [] }.forEach { $0() }
        beforeOpening()
        var catalogue: Catalogue?
        var sessionID: Int?
        var backlog: [ShotRecord] = []
        var failing: String?
        /// Files may be recorded without their digest (a burst; a crash before it was filled).
        var undigested = true
        /// Whether a sink's digest that could not be written was said (once a session).
        var digestFailureSaid = false

        func attempt() {
            do {
                if catalogue == nil {
                    let opened = try Catalogue.openRepairing(at: settings.path) { aside in
                        log.error("the catalogue '\(settings.path)' was damaged: moved aside to '\(aside)'; a new one is made from the photos")
                    }
                    try opened.setSetting("sidecarName", settings.naming.rawValue)
                    try opened.setSetting("marksInJPEG", settings.marksInJPEG ? "1" : "0")
                    let started = ContinuousClock.now
                    let report = try opened.reconcile(folders: settings.folders, naming: settings.naming, found: found)
                    for refusal in report.refusedSidecars { log.warning("catalogue: \(refusal): its marks are not taken (remove or replace it)") }
                    if report.changedAnything {
                        log.info("catalogue: \(report.importedShots) shot(s) found on disk without a record, \(report.attachedFiles) file(s) joined their shot, \(report.missing) missing, \(report.back) back (\(ContinuousClock.now - started))")
                    }
                    sessionID = try opened.startSession(name: settings.session)
                    catalogue = opened
                    log.debug("catalogue '\(settings.path)' open: session run \(sessionID!)")
                }
                if !backlog.isEmpty, let catalogue {
                    try catalogue.record(backlog, session: sessionID)
                    log.debug("catalogue: \(backlog.count) shot(s) recorded", [("recorded", String(backlog.count))])
                    if failing != nil {
                        log.info("catalogue '\(settings.path)' writable again: \(backlog.count) shot(s) caught up")
                    }
                    let identities = backlog.compactMap(\.shotID)
                    backlog.removeAll()
                    if !identities.isEmpty { recorded(identities) }
                }
                failing = nil
            } catch {
                let message = "\(error)"
                if failing != message {
                    log.error("catalogue: \(message); shots are still stored and answered, and are recorded when it works again (\(backlog.count) waiting)")
                }
                failing = message
                if error.isCorrupt { catalogue = nil }
            }
        }

        attempt()
        state.withLock { state in defer { state.opening = nil }; return state.opening ?? [] }.forEach { $0() }
        // Shots are written once `gathering` has passed without a new one, in one
        // transaction (WAL, synchronous NORMAL: no fsync of its own), so that `shots` lists
        // a burst's last shot at once after it. Their digests come from the sink that
        // wrote them (``ShotCatalogue/recordDigest(of:sha256:)``); only a sink that gives none has its files read
        // back, and that waits until the session has been quiet for `quiet`: reading a
        // photo back mid-burst competed with the next shots' stores (a 30-shot burst took
        // 1.7x as long with the catalogue on) and made the session's end wait for it.
        var waiting: [PendingShot] = []
        /// Digests sinks gave for files whose shots are not recorded yet (path → SHA-256).
        var digests: [String: String] = [:]
        var lastArrival = ContinuousClock.now
        var firstWaiting = ContinuousClock.now
        while true {
            let now = ContinuousClock.now
            // Digests are due once the session is quiet, with the catalogue open and written up
            // to date; otherwise the thread sleeps until a shot, a retry or the end.
            let digestsDue = undigested && catalogue != nil && backlog.isEmpty
            let wakeIn: Duration = waiting.isEmpty
                ? (digestsDue ? max(.milliseconds(50), Self.quiet - (now - lastArrival)) : Self.retryInterval)
                : max(.milliseconds(1), min(Self.gathering - (now - lastArrival), Self.longestWait - (now - firstWaiting)))
            let sleeping = waiting.isEmpty
            let ready = state.withLock { state -> Bool in
                state.sleeping = sleeping
                return !state.incoming.isEmpty || !state.digests.isEmpty || !state.finishing.isEmpty
            }
            let woken = ready ? .success : wake.wait(timeout: wakeIn.fromNow)
            let (incoming, finishing, given, arrived) = state.withLock { state in
                defer { state.incoming.removeAll(); state.finishing.removeAll(); state.digests.removeAll() }
                return (state.incoming, state.finishing, state.digests, state.lastArrival)
            }
            // At most a few thousand wait (a sink's digests for shots never answered).
            for (path, digest) in given where digests.count < 4096 { digests[path] = digest }
            if !incoming.isEmpty {
                if waiting.isEmpty { firstWaiting = ContinuousClock.now }
                lastArrival = arrived ?? ContinuousClock.now
                // Each shot's EXIF header is read when the thread takes it (from the page
                // cache, a fraction of a millisecond), during the burst, not all at its end.
                waiting += incoming.map { $0.withExifRead() }
            }
            var wrote = false
            let quiet = ContinuousClock.now - lastArrival >= Self.quiet
            let settled = ContinuousClock.now - lastArrival >= Self.gathering || ContinuousClock.now - firstWaiting >= Self.longestWait
            if !waiting.isEmpty && (settled || waiting.count >= Self.mostWaiting || !finishing.isEmpty) {
                // Mid-burst (shots still coming), the digests a sink did not give wait for a
                // quiet moment: reading a photo back then would compete with the next store.
                let digesting = quiet || !finishing.isEmpty
                let lacking = waiting.contains { $0.answer.stored.contains { $0.cameraFile != nil && digests[Catalogue.absolute($0.location)] == nil } }
                backlog += waiting.map { $0.record(digesting: digesting, digests: &digests) }
                if !digesting && lacking {
                    undigested = true
                    log.debug("catalogue: \(waiting.count) shot(s) recorded mid-burst; their digests follow (from the sink that wrote them, or read back once the session is quiet)")
                }
                waiting.removeAll()
                attempt()
                wrote = true
            } else if woken == .timedOut && waiting.isEmpty && (!backlog.isEmpty || catalogue == nil) {
                attempt()  // retrying a catalogue that failed
                wrote = true
            }
            // Digests that came after their shot's record: into it, once it is written. A
            // digest of a shot still waiting goes in with its record; the others are tried
            // when one comes or records were written, not at every wake (in a burst that
            // was a query per digest per shot).
            if !digests.isEmpty && backlog.isEmpty && (!given.isEmpty || wrote), let catalogue {
                let waitingPaths = Set(waiting.flatMap { $0.answer.stored.map { Catalogue.absolute($0.location) } })
                for (path, digest) in digests where !waitingPaths.contains(path) {
                    do throws(CatalogueError) {
                        if try catalogue.applyDigest(digest, of: path) { digests.removeValue(forKey: path) }
                    } catch {
                        // Kept and tried again; a file still without one is read back later.
                        if !digestFailureSaid { log.warning("catalogue: a file's digest not recorded yet (\(error)); it is tried again") }
                        digestFailureSaid = true
                    }
                }
            }
            if undigested && waiting.isEmpty && backlog.isEmpty && (quiet || !finishing.isEmpty), let catalogue {
                undigested = digestLeftovers(catalogue, stoppingAtNextShot: finishing.isEmpty)
            }
            if !finishing.isEmpty {
                if let catalogue, let sessionID {
                    do { try catalogue.endSession(sessionID) } catch { log.warning("catalogue: the session's end not recorded: \(error)") }
                }
                if !backlog.isEmpty { log.error("catalogue: \(backlog.count) shot(s) not recorded (\(failing ?? "not writable")); their photos are on disk, and the next start records them") }
                catalogue = nil  // closed: SQLite checkpoints its journal into the file
                finishing.forEach { $0() }
                return
            }
        }
    }

    /// Fills in the digests that were left out, a few files at a time, until none is left
    /// or (`stoppingAtNextShot`) a shot arrives; returns whether some are left to do in
    /// this run. A file that cannot be read now, and a catalogue that cannot be read or
    /// written, are left for the next mid-burst record or the next start.
    private func digestLeftovers(_ catalogue: Catalogue, stoppingAtNextShot: Bool) -> Bool {
        var unreadable: Set<String> = []
        while true {
            guard let paths = try? catalogue.undigestedFiles(limit: 16 + unreadable.count) else { return false }
            let todo = paths.filter { !unreadable.contains($0) }
            if todo.isEmpty { return false }  // none left but those that cannot be read now
            for path in todo {
                if stoppingAtNextShot, state.withLock({ !$0.incoming.isEmpty || !$0.finishing.isEmpty }) { return true }
                guard let digest = FileDigest.sha256(of: path) else { unreadable.insert(path); continue }
                do { try catalogue.setDigest(digest, of: path) } catch { return false }
            }
        }
    }

    /// How long the session must be quiet before the digests a sink did not give are read
    /// back from the files.
    static let quiet: Duration = .milliseconds(500)
    /// How long shots that arrive together are gathered into one write: longer than the
    /// gap between a burst's answers (10-20 ms for 9 MB JPEGs here), so that no record is
    /// written between two of its stores (a record's journal blocks ride on the next
    /// photo's fsync), and short enough that `shots` lists the burst at once after it.
    static let gathering: Duration = .milliseconds(100)
    /// The longest a shot waits to be recorded during a long burst.
    static let longestWait: Duration = .seconds(10)
    /// How many shots wait at most.
    static let mostWaiting = 100
    /// How often a failing catalogue is tried again.
    static let retryInterval: Duration = .seconds(5)
}
