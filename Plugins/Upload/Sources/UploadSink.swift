#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// A sink that uploads each shot's files to any rclone remote (SFTP, WebDAV, FTP, S3,
/// Dropbox, Google Drive, …) by running Debian's `rclone`, after the shot is answered.
///
/// - A shot's files are queued durably (``DeliveryQueue``) before its answer, and uploaded
///   on a thread of their own, one at a time: a slow, broken or full remote never delays
///   or fails a shot. A remote that fails is tried again after 1 s, doubling to 30 s; the
///   log says so once, and when it works again.
/// - The file uploaded is the one an earlier sink stored (a `files` sink's, tagged); with
///   none, the queue keeps a spooled copy of the camera's bytes until it is uploaded.
/// - A session killed with uploads queued goes on with them at its next start.
public final class UploadSink: PhotoSink, SessionObserver {
    public static let typeName = "upload"

    public static func register(in registry: PluginRegistry) throws {
        try registry.registerSink(typeName, summary: "uploads each shot to an rclone remote (SFTP, WebDAV, FTP, S3, cloud drives) from a durable queue, after the answer",
                                  abilities: [.sessionObserver]) { options, environment in
            UploadSink(options: try Options(options), session: environment.session, instance: environment.instanceName, log: environment.log)
        }
    }

    private let options: Options
    private let session: String
    private let log: Logger
    private let folder: String
    private let spool: String
    private let upload: RcloneUpload
    private let queue: DeliveryQueue
    private let waiter = BlockingQueue(label: "shutterpipe.upload")
    /// With `minRating` or `picksOnly`: the frames queued in this run, by shot id and
    /// camera ("" for a session's only camera).
    private let queuedFrames = Mutex<Set<String>>([])

    /// An upload keeps no copy the camera's may be deleted for: a remote can be away for
    /// hours.
    public var role: SinkRole { .processing }

    public init(options: Options, session: String, instance: String = UploadSink.typeName, log: Logger = .discarding) {
        self.options = options
        self.session = session
        self.log = log
        folder = options.queueFolder ?? Self.defaultQueueFolder()
        let name = Self.safe("\(session)-\(instance)")
        spool = "\(folder)/spool-\(name)"
        let upload = RcloneUpload(options: options, queueFolder: folder, instance: name, log: log)
        self.upload = upload
        queue = DeliveryQueue(journal: "\(folder)/queue-\(name).txt", what: "upload", noun: "upload(s)", log: log, shown: RcloneUpload.shown, batch: 64) { upload.deliver($0) }
    }

    public func begin() async throws {
        for path in [folder, spool] {
            // The folders above too: a fresh account may have no ~/.local/state yet.
            do { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]) } catch {
                throw ShutterError(.storageUnavailable, "upload: cannot make the queue folder '\(path)': \(error.localizedDescription)",
                                   fix: "set queueFolder to a folder you can write, or fix that folder's owner or mode")
            }
            try makePrivate(path)
        }
        guard Self.findProgram(options.rclone) != nil else {
            throw ShutterError(.invalidConfiguration, "upload: cannot run '\(options.rclone)': not found\(options.rclone.contains("/") ? "" : " on PATH") or not executable",
                               fix: "install rclone (apt install rclone; scripts/bootstrap does), or set 'rclone' to its path")
        }
        queue.start()
    }

    /// The queue's journal names remotes (with their parameters) and its spool holds
    /// photos: the folder is the session's user's alone (0700), made so when it was not.
    private func makePrivate(_ path: String) throws(ShutterError) {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw ShutterError(.storageUnavailable, "upload: the queue folder '\(path)' is not a folder (a symbolic link, say)", fix: "remove it, or set queueFolder to a folder of yours")
        }
        guard info.st_uid == geteuid() else {
            throw ShutterError(.storageUnavailable, "upload: the queue folder '\(path)' belongs to another user (uid \(info.st_uid))", fix: "set queueFolder to a folder of yours")
        }
        if info.st_mode & 0o077 != 0 {
            guard chmod(path, 0o700) == 0 else {
                throw ShutterError(.storageUnavailable, "upload: cannot make the queue folder '\(path)' private: \(String(cString: strerror(errno)))", fix: "chmod 700 '\(path)'")
            }
            log.info("upload: made the queue folder '\(path)' private (0700): its journal names the remotes")
        }
    }

    public func store(_ photo: CapturedPhoto, context: ShotContext) async throws -> SinkReceipt {
        // Rated or picked later: queued when the photographer marks it (``begin(_:)``).
        guard !options.waitsForMarks else { return SinkReceipt(files: []) }
        let remote = Self.expand(options.remote, session: context.session, date: Date())
        var jobs: [DeliveryQueue.Job] = []
        var warnings: [String] = []
        for file in photo.files where options.selects(extension: file.fileExtension) {
            if let stored = context.storedSoFar.first(where: { $0.cameraFile == file.name && Self.isFile($0.location) }) {
                let path = stored.location.hasPrefix("/") ? stored.location : FileManager.default.currentDirectoryPath + "/" + stored.location
                jobs.append(RcloneUpload.job(remote: remote, source: path, name: PathName.lastComponent(path), spooled: false))
                continue
            }
            // No earlier sink stored it as a file here: the queue keeps the bytes itself.
            let name = "\(context.shot.description)-\(PathName.lastComponent(file.name))"
            do {
                let path = try Self.spoolWrite(file.data, folder: spool, name: Self.safe(name))
                // The camera's name, as one component: never a path that leaves the remote folder.
                let remoteName = PathName.lastComponent(file.name)
                jobs.append(RcloneUpload.job(remote: remote, source: path, name: [".", "..", ""].contains(remoteName) ? "_" : remoteName, spooled: true))
            } catch {
                warnings.append("not queued for upload: \(error.message)")
                log.error("\(file.name) is not queued for upload: \(error.message)")
            }
        }
        do { try queue.enqueue(jobs) } catch {
            warnings.append("not queued for upload: \(error.message)")
            log.error("\(photo.files.map(\.name).joined(separator: ", ")) not queued for upload: \(error.message)")
        }
        return SinkReceipt(files: [], warnings: warnings)
    }

    /// With `minRating` or `picksOnly`: watches the catalogue's marks, and queues a
    /// frame's files (a camera's, of a shot of several) the first time its own marks
    /// qualify: a rig shot whose camera B alone was rated sends B's files, not A's.
    public func begin(_ session: SessionView) async {
        upload.copies.use(session.catalogue)
        guard options.waitsForMarks else { return }
        guard let catalogue = session.catalogue else {
            return log.error("upload: minRating and picksOnly wait for the photographer's marks, and this session keeps no catalogue: nothing will be uploaded (remove 'catalogue: off')")
        }
        catalogue.observe { [weak self] change in
            guard let self, case .marked(let shot) = change else { return }
            let frames = (shot.frames.isEmpty ? [CatalogueFrame(camera: nil, rating: shot.rating, label: shot.label, pick: shot.pick)] : shot.frames)
                .filter { frame in self.qualifies(frame.marks) && self.queuedFrames.withLock { $0.insert("\(shot.id)/\(frame.camera ?? "")").inserted } }
            guard !frames.isEmpty else { return }
            Task { await self.waiter.run { self.queue(frames, of: shot) } }
        }
    }

    private func qualifies(_ marks: ShotMarks) -> Bool {
        (options.minRating == 0 || marks.rating >= options.minRating) && (!options.picksOnly || marks.pick == .picked)
    }

    /// Queues the files of `frames` of a marked shot, as stored.
    private func queue(_ frames: [CatalogueFrame], of shot: CatalogueShot) {
        let remote = Self.expand(options.remote, session: shot.session ?? session, date: Date())
        let cameras = frames.map(\.camera)
        let jobs = shot.files.filter { !$0.missing && (shot.frames.isEmpty || cameras.contains($0.camera)) && options.selects(extension: (PathName.fileExtension($0.path)).lowercased()) }.map {
            RcloneUpload.job(remote: remote, source: $0.path, name: PathName.lastComponent($0.path), spooled: false)
        }
        let what = shot.frames.count > 1 ? "shot \(shot.id) frame \(cameras.map { $0 ?? "-" }.joined(separator: ", "))" : "shot \(shot.id)"
        let marks = frames[0].marks
        do {
            try queue.enqueue(jobs)
            log.info("\(what) \(marks.pick == .picked ? "picked" : "rated \(marks.rating)"): \(jobs.count) file(s) queued for upload")
        } catch {
            queuedFrames.withLock { queued in for camera in cameras { queued.remove("\(shot.id)/\(camera ?? "")") } }
            log.error("\(what) not queued for upload: \(error.message)")
        }
    }

    public func observe(_ answer: ShutterAnswer, trigger: String) async {}

    public func end() async {
        let (queue, upload) = (self.queue, self.upload)
        await waiter.run { queue.stop(within: .seconds(30), interrupt: upload.interrupt) }
        await upload.copies.flush()
    }

    public func statusNote() async -> String? { queue.statusNote }

    /// How many uploads wait, how many were made, and which remotes wait why.
    public var snapshot: DeliveryQueue.Snapshot { queue.snapshot }

    /// The program's path: `name` itself when it has a `/`, else the first executable of
    /// that name on PATH.
    static func findProgram(_ name: String) -> String? {
        if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }

    static func defaultQueueFolder() -> String {
        let environment = ProcessInfo.processInfo.environment
        let state = environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "\(environment["HOME"] ?? NSHomeDirectory())/.local/state"
        return "\(state)/shutterpipe/uploads"  // made, with the folders above it, at begin()
    }

    /// `{session}` and `{date}` in the remote.
    static func expand(_ remote: String, session: String, date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd"
        return remote.replacingOccurrences(of: "{session}", with: session).replacingOccurrences(of: "{date}", with: formatter.string(from: date))
    }

    static func safe(_ name: String) -> String {
        String(name.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) || "-_.".unicodeScalars.contains($0) ? Character($0) : "_" })
    }

    private static func isFile(_ location: String) -> Bool {
        var info = stat()
        return !location.isEmpty && stat(location, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    /// Writes the bytes durably (temporary file, fsync, rename, folder fsync).
    private static func spoolWrite(_ data: Data, folder: String, name: String) throws(ShutterError) -> String {
        let path = "\(folder)/\(name)"
        do { try DurableFile.replace(path, with: data) } catch { throw spoolError(folder, error.code) }
        return path
    }

    private static func spoolError(_ folder: String, _ code: Int32 = errno) -> ShutterError {
        ShutterError(.storageUnavailable, "cannot keep a copy to upload in '\(folder)': \(String(cString: strerror(code)))",
                     fix: "free space on that disk, or list a files sink before the upload sink")
    }
}
