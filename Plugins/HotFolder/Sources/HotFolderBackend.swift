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

    struct State {
        var context: BackendContext?
        var watcher: FolderWatcher?
        /// Files handed to the session and not finished yet, by path.
        var inFlight: Set<String> = []
        var ledger: IngestedLedger?
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
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: options.folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw ShutterError(.noCamera, "hotfolder: '\(options.folder)' is not a folder", fix: "make it (mkdir -p \(options.folder)), or set 'folder' to the one the photos are written into")
        }
        let ledger = IngestedLedger(folder: options.folder)
        if options.originals == "move" {
            try DurableFiles.makeFolder(options.movedTo)
        }
        let watcher = FolderWatcher(folder: options.folder, settle: options.settle, log: log, accepts: { [options] name in Self.accepts(name, options) }) { [weak self] path in
            self?.take(path)
        }
        state.withLock { state in
            state.context = context
            state.ledger = ledger
            state.watcher = watcher
        }
        do { try await reader.run { try watcher.start() } } catch {
            // Not watching: nothing half-prepared is kept for a later stop or shot.
            state.withLock { $0 = State() }
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
            defer { state.withLock { _ = $0.inFlight.remove(path) } }  // taken again only if it comes back
            guard stored else {
                log.warning("\(file.name) stays in '\(options.folder)': not stored; it is taken again at the next enter")
                continue
            }
            let key = IngestedLedger.key(path)
            if let key, state.withLock({ $0.ledger })?.add(key) == false {
                log.warning("cannot record \(file.name) as taken in '\(options.folder)/\(IngestedLedger.name)': it may be taken again at the next enter")
            }
            switch options.originals {
            case "move":
                do throws(ShutterError) { try DurableFiles.move(path, into: options.movedTo) } catch { log.warning("\(file.name) could not be moved to '\(options.movedTo)': \(error.message)") }
            case "delete":
                if unlink(path) != 0 { log.warning("\(file.name) could not be deleted: \(String(cString: strerror(errno)))") }
            default:
                break
            }
        }
    }

    public func stop() async {
        let watcher = state.withLock { state -> FolderWatcher? in
            defer { state.watcher = nil; state.context = nil }
            return state.watcher
        }
        if let watcher { await reader.run { watcher.stop() } }
    }

    public func status() async -> [CameraStatus] {
        var isFolder: ObjCBool = false
        let there = FileManager.default.fileExists(atPath: options.folder, isDirectory: &isFolder) && isFolder.boolValue
        return [CameraStatus(name: options.camera, connected: there)]
    }

    /// A complete file, on the watcher's thread: read and handed to the session once.
    private func take(_ path: String) {
        let (context, ledger, fresh) = state.withLock { state -> (BackendContext?, IngestedLedger?, Bool) in
            (state.context, state.ledger, state.inFlight.insert(path).inserted)
        }
        guard let context, fresh else { return }
        if let key = IngestedLedger.key(path), ledger?.contains(key) == true {
            state.withLock { _ = $0.inFlight.remove(path) }
            return
        }
        var info = stat()
        guard let data = FileManager.default.contents(atPath: path), stat(path, &info) == 0 else {
            state.withLock { _ = $0.inFlight.remove(path) }
            log.debug("\(path) went away before it was read")
            return
        }
        let name = (path as NSString).lastPathComponent
        let taken = Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
        log.info("taken from the hot folder: \(name) (\(data.count) bytes)")
        var photo = CapturedPhoto(files: [CapturedFile(name: name, data: data, cameraPath: path)], camera: options.camera, captureTime: taken)
        photo.origin = "hot folder"
        context.deliver(photo)
    }

    /// Whether a file of this name is taken: not hidden, not a temporary name, one of the
    /// extensions.
    static func accepts(_ name: String, _ options: Options) -> Bool {
        guard !name.hasPrefix("."), !name.hasSuffix("~") else { return false }
        let lowered = name.lowercased()
        for temporary in [".part", ".partial", ".tmp", ".crdownload", ".download", ".filepart"] where lowered.hasSuffix(temporary) { return false }
        guard let dot = lowered.lastIndex(of: ".") else { return false }
        return options.extensions.contains(String(lowered[lowered.index(after: dot)...]))
    }
}
