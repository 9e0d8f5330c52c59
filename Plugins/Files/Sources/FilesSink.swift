import Foundation
import ShutterPipeImaging
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// A sink that writes every file of a photo into a folder, durably, under a name from a
/// template, never overwriting anything.
public final class FilesSink: PhotoSink, SessionObserver, PhotoArchive {
    /// The type name in configs.
    public static let typeName = "files"

    /// Registers the `files` type.
    public static func register(in registry: PluginRegistry) throws {
        try registry.registerSink(typeName, summary: "writes photos into a folder durably (temp file, fsync, rename), never overwriting", abilities: [.sessionObserver, .photoArchive]) { options, environment in
            FilesSink(options: try Options(options), log: environment.log)
        }
    }

    private struct State {
        var counters: [String: SequenceCounter] = [:]
        /// `{cameraseq}`: by folder, then camera.
        var cameraCounters: [String: [String: SequenceCounter]] = [:]
        var lastDirectory: String?
        var suffixes = CollisionSuffixes()
    }

    let options: Options
    let log: Logger
    private let state = Mutex(State())
    /// The session's catalogue, which records each file's SHA-256: the sink hashes the
    /// bytes it writes, beside their write (``PhotoDigest/Queue``), so that the catalogue never
    /// reads a photo back. Without a catalogue nobody asks for digests.
    private let catalogue = Mutex<(any ShotCatalogue)?>(nil)
    private let digests = PhotoDigest.Queue()
    /// The copies to the mirrors, when there are any.
    private let mirrorQueue: MirrorQueue?
    /// The mirror queue, for tests.
    var mirrors: MirrorQueue? { mirrorQueue }
    /// Storing is throughput work: it yields the CPU to firing cameras and triggers.
    private let io = BlockingQueue(label: "shutterpipe.sink.files", priority: .background)

    /// The files sink keeps every file of every photo.
    public var role: SinkRole { .archival }

    /// Creates a sink.
    public init(options: Options, log: Logger = .discarding) {
        self.options = options
        self.log = log
        mirrorQueue = options.mirrors.isEmpty ? nil : MirrorQueue(folder: Self.staticPrefix(of: options.directory), log: log)
    }

    /// At session start, before any event (preflight): creates the output folder (for a
    /// templated one, the part before its first placeholder) and checks that it takes
    /// files, so a folder that cannot work fails the session now, with the message a shot
    /// would get; warns when free space is under `minFreeSpace`; and removes temporary
    /// files a killed run left there.
    public func begin() async throws {
        let templated = options.directory.text.contains("{")
        let directory = templated ? staticDirectoryPrefix : PluginOptions.expandingTilde(options.directory.text)
        let minimum = options.minFreeSpace
        try await io.run { [self] in try self.preflight(directory, templated: templated, minimum: minimum) }
        if let mirrorQueue {
            let root = Self.staticPrefix(of: options.directory)
            try await io.run { try DurableWriter.createDirectory(root) }
            mirrorQueue.start()
        }
    }

    /// Lets the mirror copies finish (30 s at most; what is left is made at the next start).
    public func end() async {
        // The last shots' digests reach the catalogue before it closes (it ends after the
        // sinks); a few milliseconds a photo.
        await io.run { [digests] in digests.waitUntilDone(within: .seconds(10)) }
        guard let mirrorQueue else { return }
        await io.run { mirrorQueue.stop(within: .seconds(30)) }
        await mirrorQueue.copies.flush()
    }

    private func preflight(_ directory: String, templated: Bool, minimum: Int64) throws(ShutterError) {
        if !templated { try DurableWriter.createDirectory(directory) }
        try DurableWriter.checkWritable(directory)
        if let free = DurableWriter.availableBytes(at: directory), free < minimum {
            log.warning("only \(Self.describe(bytes: free)) free in '\(directory)' (minFreeSpace: \(Self.describe(bytes: minimum))): free space on that disk or point 'directory' at another one before the shoot")
        }
        if !templated { removeLeftovers(in: directory) }
    }

    static func describe(bytes: Int64) -> String {
        bytes >= 1_000_000_000 ? String(format: "%.1f GB", Double(bytes) / 1e9) : String(format: "%.0f MB", Double(bytes) / 1e6)
    }

    /// Removes temporary files an interrupted run left in `directory`, and says so.
    private func removeLeftovers(in directory: String) {
        let removed = DurableWriter.removeStaleTemporaryFiles(in: directory)
        if removed > 0 { log.info("removed \(removed) temporary file(s) left in '\(directory)' by an interrupted run") }
    }

    /// Writes every file of `photo`, then fsyncs the folders; returns where they are.
    public func store(_ photo: CapturedPhoto, context: ShotContext) async throws -> SinkReceipt {
        try await io.run { [self] () throws(ShutterError) in try self.storeNow(photo, context: context) }
    }

    /// Free bytes where the last photo went (or would go).
    public func statusNote() async -> String? { mirrorQueue?.statusNote }

    /// The catalogue, if the session keeps one, hears of every mirror copy.
    public func begin(_ session: SessionView) async {
        mirrorQueue?.copies.use(session.catalogue)
        catalogue.withLock { $0 = session.catalogue }
    }

    public func observe(_ answer: ShutterAnswer, trigger: String) async {}

    public func availableCapacity() async -> Int64? {
        let directory = state.withLock { $0.lastDirectory } ?? staticDirectoryPrefix
        return await io.run { DurableWriter.availableBytes(at: directory) }
    }

    /// Queues the copies of `files` to every mirror; durable before the shot is answered.
    private func mirror(_ files: [StoredFile]) throws(ShutterError) {
        guard let mirrorQueue else { return }
        let root = Self.staticPrefix(of: options.directory)
        let jobs = options.mirrors.flatMap { mirror in
            files.compactMap { file -> MirrorQueue.Job? in
                // By bytes: a folder named from a label that begins with a combining mark.
                guard let relative = PathName.relative(file.location, below: root), !relative.isEmpty else { return nil }
                // Absolute: a later start from another folder finds them all the same.
                let absolute = { (path: String) in URL(fileURLWithPath: path).standardizedFileURL.path }
                return MirrorQueue.Job(mirror: absolute(PluginOptions.expandingTilde(mirror)), source: absolute(file.location), relative: relative)
            }
        }
        try mirrorQueue.enqueue(jobs)
    }

    private var staticDirectoryPrefix: String {
        let text = options.directory.text
        let prefix = text.prefix { $0 != "{" }
        let path = PluginOptions.expandingTilde(String(prefix))
        var candidate = path.isEmpty ? "." : path
        while !FileManager.default.fileExists(atPath: candidate) && candidate != "/" && candidate != "." {
            candidate = PathName.parent(candidate)
            if candidate.isEmpty { candidate = "." }
        }
        return candidate
    }

    private func storeNow(_ photo: CapturedPhoto, context: ShotContext) throws(ShutterError) -> SinkReceipt {
        guard let first = photo.files.first else {
            throw ShutterError(.cameraFailure, "the camera delivered no file for shot #\(context.shotNumber)")
        }
        var values = TemplateValues(session: context.session, sequence: 0, shot: context.shotNumber,
                                    captureTime: context.captureTime, camera: context.camera,
                                    name: first.stem, fileExtension: first.fileExtension, trigger: context.trigger)
        values.label = context.label
        values.sequenceFrame = context.sequence
        values.serial = first.cameraSerial
        if options.filename.uses("capturetime") || options.directory.uses("capturetime") { values.cameraTime = CameraCaptureTime.of(photo.files) }
        let directory = options.directory.renderFolder(values)
        // Every folder below the sink's own is opened without following a link, and the
        // files are made in the folders so opened (a label's folder replaced by a link to
        // ~/.ssh gets nothing).
        let root = Self.staticPrefix(of: options.directory)
        let base = try DurableWriter.confinedFolder(directory, below: root)
        var counter = try counter(for: directory, in: base)
        // Whatever happens below, numbers reserved stay reserved: never hand one out twice.
        defer { state.withLock { [counter] in $0.counters[directory] = counter; $0.lastDirectory = directory } }
        if options.filename.usesSequence { values.sequence = try counter.reserve(in: base) }
        if options.filename.uses("cameraseq") {
            var own = try cameraCounter(for: directory, camera: context.camera)
            defer { state.withLock { [own] in $0.cameraCounters[directory, default: [:]][context.camera] = own } }
            values.cameraSequence = try own.reserve(in: base)
        }

        var stored: [StoredFile] = []
        /// The digests begun for the photo's files, with each file's path once it is
        /// written; handed over once the photo is safe, abandoned if it never is.
        var digesting: [(digest: PhotoDigest.Pending, path: String?)] = []
        defer { for (digest, _) in digesting { digest.abandon() } }  // after `stored(at:)`, nothing
        let catalogue = self.catalogue.withLock { $0 }
        var warnings: [String] = []
        var folders: [String: ConfinedFolder] = [directory: base]
        for file in photo.files {
            values.name = file.stem
            values.fileExtension = file.fileExtension
            values.serial = file.cameraSerial
            values.camera = file.camera ?? context.camera
            let (chunks, sidecar, problems) = tagged(file, values: values, context: context)
            warnings += problems
            // Hashed from now on, beside the write and its fsync, for the catalogue; a JPEG's
            // EXIF summary read from its header in memory, so that the catalogue reads no file.
            let digest = catalogue.flatMap { digests.begin(chunks, for: $0) }
            let exif = catalogue != nil && FileKind.of(file.name) == .jpeg ? chunks.first.flatMap { ExifReader.summary(ofJPEGHeader: $0) } : nil
            if let digest { digesting.append((digest, nil)) }
            // Written and fsynced once; a taken name costs only another try at naming it.
            var prepared: PreparedFile?
            var suffix = 1  // 1: the template's own name
            var firstChoice: String?
            var taken = 0
            while true {
                var relative = options.filename.render(values)
                if suffix > 1 { relative = PlaceholderTemplate.fittingComponents(CollisionSuffixes.numbered(relative, suffix)) }
                let path = "\(directory)/\(relative)"
                let folder = PathName.parent(path)
                let opened: ConfinedFolder
                if let known = folders[folder] { opened = known } else { opened = try DurableWriter.confinedFolder(folder, below: root) }
                if prepared?.folder != folder { prepared = try DurableWriter.prepare(chunks, for: path, in: opened) }
                if try prepared!.place(at: path) {
                    folders[folder] = opened
                    if let firstChoice {
                        if suffix > 1 { state.withLock { $0.suffixes.used(suffix, for: firstChoice) } }
                        log.warning("'\(firstChoice)' already exists; stored as '\(path)', not overwriting it")
                    }
                    let sequence = options.filename.usesSequence ? values.sequence : nil
                    var record = StoredFile(location: path, sequence: sequence, byteCount: chunks.reduce(0) { $0 + $1.count }, copyOf: file)
                    record.exif = exif
                    stored.append(record)
                    if digest != nil { digesting[digesting.count - 1].path = path }
                    if let sidecar {
                        var record = StoredFile(location: try writeSidecar(sidecar, for: path, in: opened), sequence: sequence, byteCount: sidecar.count)
                        record.camera = file.camera
                        stored.append(record)
                    }
                    break
                }
                // The name is taken: never overwrite. Take the next sequence number, or a suffix.
                taken += 1
                if firstChoice == nil { firstChoice = path }
                guard taken < CollisionSuffixes.probesPerFile else {
                    throw ShutterError(.storageUnavailable,
                                       "no free file name for '\(firstChoice!)': it and the next \(taken - 1) names were all taken",
                                       fix: options.filename.usesSequence ? "move the earlier photos out of '\(directory)'"
                                           : "add {seq} to the 'filename' template, or move the earlier photos out of '\(directory)'")
                }
                if options.filename.usesSequence {
                    values.sequence = try counter.reserve(in: base)
                } else {
                    suffix = suffix == 1 ? state.withLock { $0.suffixes.first(for: path) } : suffix + 1
                }
            }
        }
        for folder in folders.values {
            do { try folder.sync() } catch { throw DurableWriter.storageError("cannot sync folder", folder.path, error.code) }
        }
        for case let (digest, path?) in digesting { digest.stored(at: path) }
        // The photo is safe here; its mirror copies are asked for (a journal line, fsynced)
        // and made after the answer. A journal that cannot be written is a warning, never a
        // lost shot: the photo itself is stored.
        do { try mirror(stored) } catch {
            log.warning("mirror: \(error.message): these files are not copied to the mirrors (\(error.fix ?? "check the capture folder"))")
            warnings.append("not queued for the mirrors: \(error.message)")
        }
        return SinkReceipt(files: stored, warnings: warnings)
    }

    /// Writes a sidecar next to `path`, never over an existing file; returns its path.
    private func writeSidecar(_ packet: Data, for path: String, in folder: ConfinedFolder) throws(ShutterError) -> String {
        let base = options.sidecarName == .append ? path : PathName.deletingExtension(path)
        for attempt in 1...1_000 {
            let candidate = attempt == 1 ? "\(base).xmp" : "\(base)-\(attempt).xmp"
            if try DurableWriter.writeNew(packet, to: candidate, in: folder) { return candidate }
        }
        throw ShutterError(.storageUnavailable, "no free sidecar name next to '\(path)'")
    }

    private func cameraCounter(for directory: String, camera: String) throws(ShutterError) -> SequenceCounter {
        if let counter = state.withLock({ $0.cameraCounters[directory]?[camera] }) { return counter }
        return try SequenceCounter(directory: directory, filename: options.filename, camera: camera)
    }

    private func counter(for directory: String, in folder: ConfinedFolder) throws(ShutterError) -> SequenceCounter {
        if let counter = state.withLock({ $0.counters[directory] }) { return counter }
        let removed = DurableWriter.removeStaleTemporaryFiles(in: folder.pinned)
        if removed > 0 { log.info("removed \(removed) temporary file(s) left in '\(directory)' by an interrupted run") }
        return try SequenceCounter(directory: directory, filename: options.filename)
    }
}
