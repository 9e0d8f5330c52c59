import Foundation
import ShutterPipeKit
import Synchronization

/// A sink that writes every file of a photo into a folder, durably, under a name from a
/// template, never overwriting anything.
public final class FilesSink: PhotoSink {
    /// The type name in configs.
    public static let typeName = "files"

    /// The options of the `files` sink.
    public struct Options: Sendable, Equatable {
        /// The output folder, a template (`~/Shoots/{session}`).
        public var directory: FileNameTemplate
        /// The file name inside it, a template that may hold sub-folders.
        public var filename: FileNameTemplate

        /// The defaults: `./captures` and `{session}-{seq:04}.{ext}`.
        public init(directory: String = "./captures", filename: String = "{session}-{seq:04}.{ext}") throws(TemplateError) {
            self.directory = try FileNameTemplate(directory)
            self.filename = try FileNameTemplate(filename)
            try self.filename.checkStaysInside()
        }
    }

    /// Registers the `files` type.
    public static func register(in registry: PluginRegistry) throws {
        try registry.registerSink(typeName, summary: "writes photos into a folder durably (temp file, fsync, rename), never overwriting") { options, environment in
            FilesSink(options: try Options(options), log: environment.log)
        }
    }

    private struct State {
        var counters: [String: SequenceCounter] = [:]
        var lastDirectory: String?
    }

    private let options: Options
    private let log: Logger
    private let state = Mutex(State())
    private let io = BlockingQueue(label: "shutterpipe.sink.files")

    /// Creates a sink.
    public init(options: Options, log: Logger = .discarding) {
        self.options = options
        self.log = log
    }

    /// Writes every file of `photo`, then fsyncs the folders; returns where they are.
    public func store(_ photo: CapturedPhoto, context: ShotContext) async throws -> SinkReceipt {
        try await io.run { [self] in try self.storeNow(photo, context: context) }
    }

    /// Free bytes where the last photo went (or would go).
    public func availableCapacity() async -> Int64? {
        let directory = state.withLock { $0.lastDirectory } ?? staticDirectoryPrefix
        return await io.run { DurableWriter.availableBytes(at: directory) }
    }

    private var staticDirectoryPrefix: String {
        let text = options.directory.text
        let prefix = text.prefix { $0 != "{" }
        let path = PluginOptions.expandingTilde(String(prefix))
        var candidate = path.isEmpty ? "." : path
        while !FileManager.default.fileExists(atPath: candidate) && candidate != "/" && candidate != "." {
            candidate = (candidate as NSString).deletingLastPathComponent
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
        let directory = PluginOptions.expandingTilde(options.directory.render(values))
        try DurableWriter.createDirectory(directory)
        var counter = try counter(for: directory)
        // Whatever happens below, numbers reserved stay reserved: never hand one out twice.
        defer { state.withLock { [counter] in $0.counters[directory] = counter; $0.lastDirectory = directory } }
        if options.filename.usesSequence { values.sequence = try counter.reserve() }

        var stored: [StoredFile] = []
        var folders: Set<String> = [directory]
        for file in photo.files {
            values.name = file.stem
            values.fileExtension = file.fileExtension
            var attempt = 1
            while true {
                var relative = options.filename.render(values)
                if attempt > 1 && !options.filename.usesSequence { relative = Self.numbered(relative, attempt) }
                let path = "\(directory)/\(relative)"
                let folder = (path as NSString).deletingLastPathComponent
                if folder != directory { try DurableWriter.createDirectory(folder) }
                if try DurableWriter.writeNew(file.data, to: path) {
                    folders.insert(folder)
                    stored.append(StoredFile(location: path, sequence: options.filename.usesSequence ? values.sequence : nil,
                                             byteCount: file.data.count))
                    break
                }
                // The name is taken: never overwrite. Take the next sequence number, or a suffix.
                attempt += 1
                guard attempt <= 10_000 else {
                    throw ShutterError(.storageUnavailable, "no free file name for '\(relative)' in '\(directory)'",
                                       fix: "add {seq} to the 'filename' template")
                }
                if options.filename.usesSequence { values.sequence = try counter.reserve() }
                log.warning("'\(path)' already exists; not overwriting it")
            }
        }
        for folder in folders { try DurableWriter.syncDirectory(folder) }
        return SinkReceipt(files: stored)
    }

    private func counter(for directory: String) throws(ShutterError) -> SequenceCounter {
        if let counter = state.withLock({ $0.counters[directory] }) { return counter }
        let removed = DurableWriter.removeStaleTemporaryFiles(in: directory)
        if removed > 0 { log.info("removed \(removed) temporary file(s) left in '\(directory)' by an interrupted run") }
        return try SequenceCounter(directory: directory)
    }

    /// `name.jpg` → `name-2.jpg`.
    static func numbered(_ relative: String, _ number: Int) -> String {
        let ns = relative as NSString
        let ext = ns.pathExtension
        let base = ext.isEmpty ? relative : ns.deletingPathExtension
        return ext.isEmpty ? "\(base)-\(number)" : "\(base)-\(number).\(ext)"
    }
}

extension FilesSink.Options {
    /// Reads the options of a `files` sink.
    public init(_ options: PluginOptions) throws {
        let directory = try options.string("directory", default: "./captures")
        let filename = try options.string("filename", default: "{session}-{seq:04}.{ext}")
        do {
            _ = try FileNameTemplate(directory)
        } catch {
            throw options.error("'directory': \(error)", key: "directory")
        }
        do {
            try self.init(directory: directory, filename: filename)
        } catch {
            throw options.error("'filename': \(error)", key: "filename")
        }
    }
}
