import ShutterPipeImaging
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// Downscaled JPEGs of stored photos for the page, made with libjpeg-turbo's scaled
/// decode: a 24 MP photo is decoded straight at 1/4 or 3/8 of its size, never at full
/// size, then encoded again. The long edge is the largest of libjpeg-turbo's scales (n/8)
/// that is at most `longEdge`.
///
/// - The source is the photo's embedded large preview (``EmbeddedPreview``) when it has
///   one at least `longEdge` long: a scaled decode still reads all of a photo's
///   entropy-coded data, about 110 ms for 10 MB here, and the embedded one is a tenth of it.
/// - While a page is open, a stored photo's preview is made at once, on a thread of its
///   own (``prepare(_:)``), so that a page asking later (the strip, a phone that was
///   asleep) finds it made. Only the newest two wait for that thread: a burst does not
///   queue CPU work behind it.
/// - The last previews are cached, and a request for one being made waits for it. With
///   a catalogue, every preview is also kept on disk beside it (``PreviewDiskCache``),
///   bounded, and found there after a restart.
final class PreviewMaker: Sendable {
    static let cacheSize = 32
    static let waitingToBePrepared = 2
    let longEdge: Int
    let log: Logger
    let budget: DecodeBudget
    /// Its caches and jobs (``PreviewMaker+Early`` shares them).
    let state = Mutex(State())
    let disk = Mutex<PreviewDiskCache?>(nil)

    struct State {
        var cache: [(key: String, data: Data)] = []
        var making: [String: ImageJob<Data>] = [:]
        var toPrepare: [String] = []
        var preparing = false
        var made = 0
        /// Previews made from a shot's bytes before its file landed, by shot number (a few).
        var early: [(shot: Int, data: Data)] = []
        /// The one being made, if any.
        var earlyJob: (shot: Int, job: ImageJob<Data>)?
        /// The cache key its stored file has, once it was stored while it was being made.
        var earlyKeys: [Int: String] = [:]
        /// The cache keys of the last shots' stored files, by shot number: a preview the
        /// backend made may come after the shot was stored (``offerSharp(_:shot:)``).
        var storedKeys: [(shot: Int, key: String)] = []
    }

    init(longEdge: Int, budget: DecodeBudget = .defaults, log: Logger = .discarding) {
        self.longEdge = longEdge
        self.budget = budget
        self.log = log
    }

    static func isJPEG(_ path: String) -> Bool {
        PhotoFormat(path) == .jpeg
    }

    /// Whether the page can show the photo at `path`: a JPEG, a RAW, a HEIF, a TIFF.
    static func canPreview(_ path: String) -> Bool {
        PhotoFormat(path) != nil
    }

    /// The file of a shot the page shows: its JPEG when it has one (RAW+JPEG), else its
    /// HEIF, else its TIFF, else its RAW.
    static func previewSource(_ paths: [String]) -> String? {
        for format in [PhotoFormat.jpeg, .heif, .tiff, .raw] {
            if let path = paths.first(where: { PhotoFormat($0) == format }) { return path }
        }
        return nil
    }

    /// Keeps previews on disk in `cache` from now on.
    func keep(on cache: PreviewDiskCache) {
        disk.withLock { $0 = cache }
    }

    /// How many previews were decoded and encoded (cache hits and waits excluded).
    var madeCount: Int { state.withLock { $0.made } }

    /// Whether the preview of `path`, as the file is now, is cached.
    func isCached(_ path: String) -> Bool {
        let key = Self.key(path) + "|upright"
        return state.withLock { $0.cache.contains { $0.key == key } }
    }

    /// Starts making the preview of the JPEG at `path` on the preparing thread.
    func prepare(_ path: String) {
        let start = state.withLock { state -> Bool in
            state.toPrepare.append(path)
            if state.toPrepare.count > Self.waitingToBePrepared { state.toPrepare.removeFirst(state.toPrepare.count - Self.waitingToBePrepared) }
            defer { state.preparing = true }
            return !state.preparing
        }
        guard start else { return }
        OwnedThread.start("shutterpipe web previews") { [self] in
            while let next = state.withLock({ state -> String? in
                if state.toPrepare.isEmpty { state.preparing = false; return nil }
                return state.toPrepare.removeLast()
            }) {
                _ = try? preview(of: next)
            }
        }
    }

    /// The preview of the photo at `path` (cached by path, size and modification time).
    /// Blocks the calling thread while it is made.
    func preview(of path: String) throws(ShutterError) -> Data {
        // "upright": previews kept on disk before they were turned upright are made again.
        try image(key: Self.key(path) + "|upright", diskEdge: longEdge, inMemory: true, counted: true, path: path) { () throws(ShutterError) in
            let started = ContinuousClock.now
            let (preview, source) = try Self.make(path, longEdge: longEdge, budget: budget)
            let took = (ContinuousClock.now - started) / .milliseconds(1)
            log.debug("preview of '\(path)' made in \(String(format: "%.1f", took)) ms from \(source.description)",
                      [("previewMs", String(format: "%.2f", took)), ("from", source.rawValue)])
            return preview
        }
    }

    /// The long edge of the grid's thumbnails.
    static let thumbnailEdge = 400

    /// A thumbnail of the photo at `path` for the grid: its preview scaled down (a few
    /// milliseconds), kept on disk like the previews, and in the browser's cache.
    func thumbnail(of path: String) throws(ShutterError) -> Data {
        let preview = try preview(of: path)
        return try image(key: Self.key(path) + "|thumbnail", diskEdge: Self.thumbnailEdge, inMemory: false, counted: false, path: path) { () throws(ShutterError) in
            var (image, _) = try JPEGDecoder.decodeScaled(preview, longEdge: Self.thumbnailEdge, budget: budget)
            image.iccProfile = JPEGMetadata(preview).iccProfile
            return try image.downscaled(toLongEdge: Self.thumbnailEdge).jpeg(quality: 80)
        }
    }

    /// The photo at `path` at full size, upright, as a JPEG (``FullSizeImage``): for a
    /// look at 100 %. Kept on disk like the previews, never in memory (tens of MB each).
    func fullSize(of path: String) throws(ShutterError) -> Data {
        try image(key: Self.key(path) + "|full", diskEdge: 0, inMemory: false, counted: false, path: path) { () throws(ShutterError) in
            let started = ContinuousClock.now
            let image = try FullSizeImage.make(path, budget: budget)
            log.debug("full-size image of '\(path)' made in \(formatDuration(ContinuousClock.now - started))")
            return image
        }
    }

    /// The image `key` names: from memory, from a request making it (waited for), from
    /// the disk cache, or made by `make` now (and kept).
    private func image(key: String, diskEdge: Int, inMemory: Bool, counted: Bool, path: String,
                       make: () throws(ShutterError) -> Data) throws(ShutterError) -> Data {
        enum Step { case hit(Data), wait(ImageJob<Data>), make(ImageJob<Data>) }
        let step = state.withLock { state -> Step in
            if let hit = state.cache.first(where: { $0.key == key }) { return .hit(hit.data) }
            if let job = state.making[key] { return .wait(job) }
            let job = ImageJob<Data>()
            state.making[key] = job
            return .make(job)
        }
        switch step {
        case .hit(let data): return data
        case .wait(let job): return try job.result.get()
        case .make(let job):
            let disk = self.disk.withLock { $0 }
            let result: Result<Data, ShutterError>
            var decoded = false
            if let data = disk?.read(key, longEdge: diskEdge) {
                log.debug("\(inMemory ? "preview" : "full-size image") of '\(path)' read from the disk cache", [("from", "diskCache")])
                result = .success(data)
            } else {
                result = Result { () throws(ShutterError) -> Data in try make() }
                decoded = true
            }
            state.withLock { state in
                state.making[key] = nil
                if counted && decoded { state.made += 1 }
                // One given meanwhile (the backend's preview, ``offerSharp``) stays.
                if inMemory, case .success(let data) = result { state.keep(key, data) }
            }
            job.finish(result)
            // Kept on disk once those waiting for it have it: a 100 % image is tens of MB.
            if decoded, case .success(let data) = result { disk?.write(data, key: key, longEdge: diskEdge) }
            return try result.get()
        }
    }

    static func key(_ path: String) -> String {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        return "\(path)|\((attributes?[.size] as? Int) ?? 0)|\((attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)"
    }

    /// Where a preview came from.
    enum Source: String {
        case photo, embedded, demosaic, heif, tiff

        var description: String {
            switch self {
            case .photo: return "the photo"
            case .embedded: return "its embedded preview"
            case .demosaic: return "a half-size demosaic of its sensor data"
            case .heif: return "the HEIF image"
            case .tiff: return "the TIFF image"
            }
        }
    }

    /// The preview of the photo at `path`, whatever its format.
    static func make(_ path: String, longEdge: Int, budget: DecodeBudget = .defaults) throws(ShutterError) -> (Data, Source) {
        try PhotoFile.check(path)
        switch PhotoFormat(path) {
        case .raw:
            // An embedded JPEG at least as large as the preview, or half the sensor's size
            // (what the demosaic would give), is the source; a small thumbnail is not.
            let source = try RawPreviewSource.source(of: path, budget: budget) { jpeg, sensorEdge in
                guard let size = JPEGDecoder.dimensions(jpeg) else { return false }
                return max(size.width, size.height) >= min(longEdge, sensorEdge / 2)
            }
            switch source {
            case .jpeg(let jpeg, let orientation):
                let (image, _) = try JPEGDecoder.decodeScaled(jpeg, longEdge: longEdge, budget: budget)
                return (try image.oriented(orientation).jpeg(), .embedded)
            case .pixels(let image):
                return (try image.downscaled(toLongEdge: longEdge).jpeg(), .demosaic)
            }
        case .heif:
            return (try HEIFDecoder.decode(path, budget: budget).downscaled(toLongEdge: longEdge).jpeg(), .heif)
        case .tiff:
            return (try TIFFDecoder.decode(path, budget: budget).downscaled(toLongEdge: longEdge).jpeg(), .tiff)
        case .jpeg, nil:
            // Mapped: a photo's embedded preview is read without reading the rest.
            return try makeFromJPEG(try PhotoFile.map(path), longEdge: longEdge, budget: budget)
        }
    }

    /// The preview of a JPEG's bytes: upright, and in the photo's own colours
    /// (libjpeg-turbo gives pixels only).
    static func makeFromJPEG(_ source: Data, longEdge: Int, budget: DecodeBudget = .defaults) throws(ShutterError) -> (Data, Source) {
        let metadata = JPEGMetadata(source)
        var (image, embedded) = try JPEGDecoder.decodeScaled(source, longEdge: longEdge, budget: budget)
        image.iccProfile = metadata.iccProfile
        return (try image.oriented(metadata.orientation).jpeg(), embedded ? .embedded : .photo)
    }

    /// `jpeg` (or its embedded large preview) decoded at the largest n/8 scale whose long
    /// edge is at most `longEdge`, and encoded again (quality 85).
    static func scaled(_ jpeg: Data, longEdge: Int, quality: Int32 = 85) throws(ShutterError) -> Data {
        try JPEGDecoder.decodeScaled(jpeg, longEdge: longEdge).image.jpeg(quality: quality)
    }
}

