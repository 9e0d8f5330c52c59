#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// A backend whose shots arrive as files in a folder: a camera uploading over Wi-Fi or
/// FTP, a scanner, another program. Like Lightroom's Auto Import and Capture One's Hot
/// Folder, each complete file goes through the sinks as a shot (naming, EXIF, catalogue,
/// screen), once.
///
/// - The folder is watched with inotify from the enter (``prepare(_:)``) to the exit, and
///   looked through at the enter. A file closed after writing, or renamed into the
///   folder, is taken at once; one whose writer keeps it open, once its size has stayed
///   the same for `settle`. Hidden files and temporary names wait for their rename.
/// - A file once every sink stored it is left (and recorded in
///   `.shutterpipe-hotfolder-ingested`, so it is never taken again), moved or deleted, as
///   `originals` says. One that was not stored stays, and is taken again at the next enter.
/// - It takes no captures: a trigger's capture is refused with the reason.
public final class HotFolderBackend: CaptureBackend {
    public static let typeName = "hotfolder"

    public static func register(in registry: PluginRegistry) throws {
        try registry.registerBackend(typeName, summary: "ingests the photos other programs write into a folder (Wi-Fi/FTP cameras, scanners), each once, through inotify") { options, environment in
            HotFolderBackend(options: try Options(options), log: environment.log)
        }
    }

    /// A file handed to the session and not finished yet.
    /// What it was taken from is kept with it: a photo still being stored when photo mode
    /// is left and entered again is finished in the folder, ledger and budget it came from.
    struct Taken: Sendable {
        var name: [UInt8]
        var identity: FileIdentity
        var key: String
        var bytes: Int64
        var folder: HotFolderDirectory
        var done: HotFolderDirectory?
        var ledger: IngestedLedger
        var budget: ByteBudget
    }

    struct State {
        var context: BackendContext?
        var watcher: FolderWatcher?
        var folder: HotFolderDirectory?
        var done: HotFolderDirectory?
        var budget: ByteBudget?
        var ledger: IngestedLedger?
        /// Names being read, so that two events for one file take it once.
        var reading: Set<[UInt8]> = []
        /// Files handed to the session and not finished yet, by ``CapturedFile/cameraPath``.
        var taken: [String: Taken] = [:]
        /// Refusals already said (name and why), so that each is said once.
        var said: Set<String> = []
    }

    private let options: Options
    private let log: Logger
    private let state = Mutex(State())
    private let reader = BlockingQueue(label: "shutterpipe.hotfolder")

    public init(options: Options, log: Logger = .discarding) {
        self.options = options
        self.log = log
    }

    public var cameraName: String { options.camera }

    public func prepare(_ context: BackendContext) async throws {
        let (options, log) = (self.options, self.log)
        let folder = try await reader.run { () throws(ShutterError) in try HotFolderDirectory.watched(options.folder) }
        let done = options.originals == "move" ? try await reader.run { () throws(ShutterError) in try HotFolderDirectory.done(options.doneFolder, in: folder, log: log) } : nil
        let ledger = await reader.run { IngestedLedger(folder: folder, log: log) }
        let watcher = FolderWatcher(folder: folder, settle: options.settle, log: log, accepts: { [options] name in Self.accepts(name, options) }) { [weak self] name in
            self?.take(name)
        }
        state.withLock { state in
            // Photos of an earlier enter still being stored stay theirs (``Taken``).
            state = State(reading: state.reading, taken: state.taken, said: state.said)
            state.context = context
            state.folder = folder
            state.done = done
            state.ledger = ledger
            state.budget = ByteBudget(limit: options.maxBuffered)
            state.watcher = watcher
        }
        do { try await reader.run { try watcher.start() } } catch {
            // Not watching: nothing half-prepared is kept for a later stop or shot.
            state.withLock { state in state = State(reading: state.reading, taken: state.taken, said: state.said) }
            throw error
        }
        log.info("watching '\(options.folder)' for photos (\(options.originals) them once stored)")
    }

    public func capture() async throws -> CapturedPhoto {
        throw ShutterError(.invalidConfiguration, "a hot folder takes no captures: its shots arrive as files in '\(options.folder)'",
                           fix: "write photos into the folder (a camera's FTP or Wi-Fi upload, another program); a camera to fire needs a camera backend")
    }

    public func finish(_ photo: CapturedPhoto, stored: Bool) async {
        await reader.run { [self] in finishNow(photo, stored: stored) }
    }

    /// Records, moves or deletes the originals of a finished photo (on the reader's thread).
    private func finishNow(_ photo: CapturedPhoto, stored: Bool) {
        for file in photo.files {
            guard let path = file.cameraPath else { continue }
            guard let taken = state.withLock({ $0.taken.removeValue(forKey: path) }) else { continue }
            let (folder, done, ledger) = (taken.folder, taken.done, taken.ledger)
            // Taken again only if it comes back.
            defer {
                taken.budget.release(taken.bytes)
                state.withLock { _ = $0.reading.remove(taken.name) }
            }
            guard stored else {
                log.warning("\(file.name) stays in '\(options.folder)': not stored; it is taken again at the next enter")
                continue
            }
            ledger.add(taken.key)  // a ledger that cannot be written says so once
            switch options.originals {
            case "move":
                guard let done else { continue }
                do throws(ShutterError) {
                    _ = try done.move(taken.name, from: folder, identity: taken.identity, data: file.data)
                } catch {
                    log.warning("\(file.name) could not be moved to '\(done.path)': \(error.message)")
                }
            case "delete":
                if !folder.remove(taken.name, if: taken.identity) {
                    log.warning("\(file.name) could not be deleted: it changed or went away since it was taken, or \(String(cString: strerror(errno)))")
                }
            default:
                break
            }
        }
    }

    public func stop() async {
        let (watcher, budget) = state.withLock { state -> (FolderWatcher?, ByteBudget?) in
            defer { state.watcher = nil; state.context = nil }
            return (state.watcher, state.budget)
        }
        budget?.close()  // a file waiting for room gives up, so the watcher can stop
        if let watcher { await reader.run { watcher.stop() } }
    }

    public func status() async -> [CameraStatus] {
        var isFolder: ObjCBool = false
        let there = FileManager.default.fileExists(atPath: options.folder, isDirectory: &isFolder) && isFolder.boolValue
        return [CameraStatus(name: options.camera, connected: there)]
    }

    /// A complete file, on the watcher's thread: opened once without following a link,
    /// checked, read within the memory budget (waiting for room) and handed to the session
    /// once. A refusal is said once per name.
    private func take(_ name: [UInt8]) {
        let (context, folder, done, ledger, budget, fresh) = state.withLock { state in
            (state.context, state.folder, state.done, state.ledger, state.budget, state.reading.insert(name).inserted)
        }
        guard let context, let folder, let ledger, let budget, fresh else { return }
        var handedOver = false
        defer { if !handedOver { state.withLock { _ = $0.reading.remove(name) } } }
        if let problem = PathName.nameProblem(name) {
            return refuse(name, problem, fix: "rename it (the sender's file names should be UTF-8 text of one line)")
        }
        let file: UntrustedFile
        do {
            file = try folder.openFile(name, limits: .init(bytes: options.maxFileSize))
        } catch {
            switch error.reason {
            case .missing: log.debug("\(error.name) went away before it was read")
            case .tooLarge: refuse(name, error.why, fix: "raise the hot folder's maxFileSize if such files are photos")
            default: refuse(name, error.why, fix: "only regular files are taken: have the sender write the photo itself")
            }
            return
        }
        // Holes cost the sender nothing and would cost us their size, in memory and on disk.
        if let sparse = UntrustedFile.sparseness(file.status) {
            return refuse(name, "it is sparse: \(formatByteCount(sparse.size)) of which only \(formatByteCount(sparse.written)) were written",
                          fix: "have the sender write the photo's bytes")
        }
        let key = IngestedLedger.key(name, file.status)
        if ledger.contains(key) { return }
        let shown = PathName.shown(name)
        if budget.wouldWait(file.size) {
            log.info("\(shown) waits to be read: the photos read before it (up to maxBuffered, \(formatByteCount(budget.limit))) are not stored yet")
        }
        guard budget.reserve(file.size) else { return }  // leaving photo mode
        let data: Data
        do { data = try file.read() } catch {
            budget.release(file.size)
            return refuse(name, error.why, fix: "only regular files are taken: have the sender write the photo itself")
        }
        let path = "\(options.folder)/\(shown)"
        let modified = file.status.st_mtim
        let taken = Date(timeIntervalSince1970: Double(modified.tv_sec) + Double(modified.tv_nsec) / 1e9)
        state.withLock { $0.taken[path] = Taken(name: name, identity: file.identity, key: key, bytes: file.size, folder: folder, done: done, ledger: ledger, budget: budget) }
        handedOver = true
        log.info("taken from the hot folder: \(shown) (\(data.count) bytes)")
        var photo = CapturedPhoto(files: [CapturedFile(name: shown, data: data, cameraPath: path)], camera: options.camera, captureTime: taken)
        photo.origin = "hot folder"
        context.deliver(photo)
    }

    /// Says once, by name, that a file is not taken, why, and the fix.
    private func refuse(_ name: [UInt8], _ why: String, fix: String) {
        let shown = PathName.shown(name)
        let first = state.withLock { state -> Bool in
            if state.said.count > 10_000 { state.said.removeAll() }
            return state.said.insert("\(shown)\u{0}\(why)").inserted
        }
        guard first else { return }
        log.warning("hotfolder: refused '\(shown)' in '\(options.folder)': \(why); it is not taken (\(fix))")
    }

    /// Whether a file of this name is looked at: not hidden, not a temporary name, one of
    /// the extensions. (Whether it is taken is decided once it is opened.)
    static func accepts(_ bytes: [UInt8], _ options: Options) -> Bool {
        let name = String(decoding: bytes, as: UTF8.self)
        guard !name.hasPrefix("."), !name.hasSuffix("~") else { return false }
        let lowered = name.lowercased()
        for temporary in [".part", ".partial", ".tmp", ".crdownload", ".download", ".filepart"] where lowered.hasSuffix(temporary) { return false }
        return options.extensions.contains(PathName.fileExtension(lowered))
    }
}
