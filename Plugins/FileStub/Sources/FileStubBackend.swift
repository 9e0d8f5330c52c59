import Foundation
import ShutterPipeFixtures
import ShutterPipeKit
import ShutterPipeSupport

/// A capture backend without a camera: it replays the image files of a folder in name
/// order, looping, or synthesises a JPEG per shot. Fault options make it fail on purpose,
/// for tests and demos.
public actor FileStubBackend: CaptureBackend, LiveViewSource {
    /// The options of the `file-stub` backend.
    public struct Options: Sendable, Equatable {
        /// The folder to replay; `nil` synthesises JPEGs.
        public var directory: String?
        /// Files of one folder that share a stem (IMG_1.CR2, IMG_1.JPG) form one exposure.
        public var pairByStem = true
        /// Width of synthesised JPEGs.
        public var width = 640
        /// Height of synthesised JPEGs.
        public var height = 480
        /// Random fine detail per 8×8 block of synthesised JPEGs (0–63); it sets the
        /// file size: 9 at 6000×4000 gives about 10 MB, like a camera's JPEG.
        public var detail = 0
        /// The camera name reported to sinks and templates.
        public var camera = "file-stub"
        /// Fail every Nth capture (0: never).
        public var failEvery = 0
        /// The cause of a simulated capture failure.
        public var failWith: FailureCause = .cameraFailure
        /// Refuse to enter photo mode.
        public var failOnEnter = false
        /// Added before every capture returns, like a camera's exposure and download.
        public var latency: Duration = .zero
        /// A file that holds each capture until it is released: the Nth capture waits
        /// until the file has N lines. For tests and demos that need a shot in flight at
        /// a chosen moment (a signal, a second request), without guessing a duration.
        public var gate: String?

        /// The defaults.
        public init() {}
    }

    /// The type name in configs.
    public static let typeName = "file-stub"

    /// Registers the `file-stub` type.
    public static func register(in registry: PluginRegistry) throws {
        try registry.registerBackend(typeName, summary: "replays image files from a folder, or synthesises JPEGs; can simulate faults", abilities: [.liveView]) { options, _ in
            FileStubBackend(options: try Options(options))
        }
    }

    private let options: Options
    /// Where images are made and files read: computing a JPEG or reading a file is work
    /// that must not hold a thread of the cooperative pool (the kit flags it).
    private let work = BlockingQueue(label: "file-stub")
    private var exposures: [[URL]] = []
    private var nextExposure = 0
    private var captures = 0
    private var arrivalsAtGate = 0
    private var log = Logger.discarding

    /// Creates a backend.
    public init(options: Options) {
        self.options = options
    }

    /// The configured camera name.
    public var cameraName: String { options.camera }

    /// Lists the folder (if any); fails when `failOnEnter` is set or the folder has no
    /// image files.
    public func prepare(_ context: BackendContext) async throws {
        log = context.log
        if options.failOnEnter {
            throw ShutterError(.noCamera, "file-stub: simulated failure to enter photo mode", fix: "remove 'failOnEnter: true'")
        }
        guard let directory = options.directory else { return }
        exposures = try Self.exposures(in: directory, pairByStem: options.pairByStem)
        nextExposure = 0
    }

    private var frames = 0

    /// A live-view frame: a synthesised 640×480 JPEG with a marker that moves a step each
    /// frame (and the frame's number in its comment). Frames come whether or not photo
    /// mode is on, as a camera's rear screen shows.
    public func liveViewFrame() async throws -> Data {
        frames += 1
        let frame = frames
        return await work.run { SyntheticJPEG.make(width: 640, height: 480, shot: 1, marker: frame, comment: "file-stub live view frame \(frame)") }
    }

    /// Returns the next exposure after the configured latency, or a simulated failure.
    public func capture() async throws -> CapturedPhoto {
        try await expose(firedAt: nil)
    }

    /// The next exposure at `moment`: the wait ends on a thread of its own
    /// (``WallClock``), whose wake-up is the moment the stub's shutter fires.
    public func capture(at moment: Date?) async throws -> CapturedPhoto {
        guard let moment, moment.timeIntervalSinceNow > 0 else { return try await expose(firedAt: nil) }
        return try await expose(firedAt: await WallClock.wait(until: moment))
    }

    /// What a replayed file may be: a regular file (any number of names: a sample folder
    /// may hold hard links) of at most 2 GB, twice a medium-format camera's largest RAW.
    static let fileLimits = UntrustedFile.Limits(bytes: 2 << 30, links: Int.max)

    private func expose(firedAt: Date?) async throws -> CapturedPhoto {
        if options.latency > .zero { try await Task.sleep(for: options.latency) }
        if let gate = options.gate { try await wait(at: gate) }
        // The moment of the exposure, before the image is made.
        let latency = options.latency.inSeconds
        let exposed = firedAt.map { $0.addingTimeInterval(latency) } ?? Date()
        captures += 1
        if options.failEvery > 0 && captures % options.failEvery == 0 {
            throw ShutterError(options.failWith, "file-stub: simulated failure of capture \(captures) (failEvery: \(options.failEvery))")
        }
        let (shot, options) = (captures, self.options)
        guard !exposures.isEmpty else {
            let image = await work.run { SyntheticJPEG.make(width: options.width, height: options.height, shot: shot, detail: options.detail) }
            return CapturedPhoto(files: [CapturedFile(name: String(format: "STUB%04d.JPG", shot % 10_000), data: image)],
                                 camera: options.camera, captureTime: exposed)
        }
        let urls = exposures[nextExposure]
        nextExposure = (nextExposure + 1) % exposures.count
        let files = try await work.run { () throws(ShutterError) -> [CapturedFile] in
            try urls.map { url throws(ShutterError) in
                // Opened once, without following a link, and read through that descriptor:
                // the folder is the user's, but a name in it may be replaced while we replay.
                do throws(UntrustedFileError) {
                    return CapturedFile(name: url.lastPathComponent, data: try UntrustedFile.contents(of: url.path, limits: Self.fileLimits))
                } catch {
                    throw ShutterError(.cameraFailure, "file-stub: cannot replay \(error.description)",
                                       fix: "put regular image files of at most 2 GB in '\(options.directory ?? "")'")
                }
            }
        }
        return CapturedPhoto(files: files, camera: options.camera, captureTime: exposed)
    }

    /// Nothing to release.
    public func stop() async {}

    /// Holds the capture until `gate` has as many lines as captures have arrived at it.
    /// The log line says it waits (a test waits for that line, then acts, then releases
    /// it); a capture cancelled meanwhile (`captureTimeout`) ends at once.
    private func wait(at gate: String) async throws {
        arrivalsAtGate += 1
        let number = arrivalsAtGate
        guard Self.lines(in: gate) < number else { return }
        log.info("file-stub: capture \(number) waits at the gate \(gate) (a line appended to it releases it)")
        while Self.lines(in: gate) < number {
            try await Task.sleep(for: .milliseconds(5))
        }
        log.info("file-stub: capture \(number) released by the gate")
    }

    private static func lines(in file: String) -> Int {
        (FileManager.default.contents(atPath: file) ?? Data()).reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
    }

    static func exposures(in directory: String, pairByStem: Bool) throws -> [[URL]] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ShutterError(.noCamera, "file-stub: folder '\(directory)' does not exist", fix: "fix 'directory', or remove it to synthesise JPEGs")
        }
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { !$0.hasPrefix(".") }
            .sorted()
        let root = URL(fileURLWithPath: directory)
        let files = names.map { root.appendingPathComponent($0) }.filter {
            (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true
        }
        guard !files.isEmpty else {
            throw ShutterError(.noCamera, "file-stub: folder '\(directory)' holds no files to replay", fix: "put image files in it")
        }
        guard pairByStem else { return files.map { [$0] } }
        var groups: [[URL]] = []
        for file in files {
            let stem = file.deletingPathExtension().lastPathComponent
            if let last = groups.last?.first, last.deletingPathExtension().lastPathComponent == stem {
                groups[groups.count - 1].append(file)
            } else {
                groups.append([file])
            }
        }
        return groups
    }
}

extension FileStubBackend.Options {
    /// Reads the options of a `file-stub` backend.
    public init(_ options: PluginOptions) throws {
        self.init()
        directory = try options.path("directory")
        pairByStem = try options.bool("pairByStem", default: pairByStem)
        width = try options.int("width", default: width, in: 8...10_000)
        height = try options.int("height", default: height, in: 8...10_000)
        detail = try options.int("detail", default: detail, in: 0...63)
        camera = try options.string("camera", default: camera)
        failEvery = try options.int("failEvery", default: failEvery, in: 0...1_000_000)
        let cause = try options.choice("failWith", from: FailureCause.allCases.map(\.rawValue), default: failWith.rawValue)
        failWith = FailureCause(rawValue: cause)!
        failOnEnter = try options.bool("failOnEnter", default: failOnEnter)
        latency = try options.duration("latency", default: latency)
        gate = try options.path("gate")
    }
}
