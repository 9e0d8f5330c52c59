#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeImaging
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// The page's 100 % view: a shot's full-size image decoded once, upright, kept in memory
/// while it is looked at, and cut into lossless tiles (``PNGEncoder``) of
/// ``tileSize`` pixels. The browser loads only the tiles on screen, so a 24 MP photo is
/// never sent whole to a phone, and what it shows is the photo's own pixels, never an
/// upscaled preview.
///
/// - A JPEG is decoded with libjpeg-turbo's accurate DCT (the pixels any other decoder of
///   the same library gives), turned upright by its EXIF orientation, and its tiles carry
///   its ICC profile.
/// - A HEIF or a TIFF is decoded whole; a RAW gives its embedded JPEG when that is the
///   sensor's full size, else LibRaw's full demosaic (``FullSizeImage/rawSource(_:)``).
/// - RGBImage images are kept up to `limit` bytes (a 24 MP one takes 72 MB), the one used
///   longest ago going first; two requests for the same image decode it once.
/// - A JPEG is decoded ahead, on a thread of its own, as soon as its preview is asked for
///   (the shot is on screen): one at a time, the latest shot's next, the others skipped.
///   Until its whole decode is done, the tiles asked for are decoded alone
///   (``TileRegions``), and its size comes from its header.
final class FullImageCache: Sendable {
    static let tileSize = 512

    private struct State {
        var images: [(key: String, image: RGBImage)] = []
        var making: [String: ImageJob<RGBImage>] = [:]
        /// The decode ahead under way, and the photo whose decode comes after it.
        var ahead: (running: Bool, next: String?) = (false, nil)
        /// The JPEGs whose tiles were asked for last, read once for all their tiles.
        var headers: [(key: String, header: JPEGHeader)] = []
    }

    /// A JPEG as its tiles need it: its bytes, upright size, orientation and profile.
    struct JPEGHeader: Sendable {
        let data: Data
        let width: Int
        let height: Int
        let orientation: Int
        let iccProfile: Data?
    }

    /// How many JPEGs' bytes are kept for their tiles: the shot looked at and the one before.
    private static let keptHeaders = 2
    /// A JPEG larger than this (a camera's is 5-30 MB) is read for each tile, never kept.
    private static let largestKeptJPEG = 128 << 20

    private let limit: Int
    private let log: Logger
    let budget: DecodeBudget
    private let regions: TileRegions
    private let state = Mutex(State())

    /// A cache of `limit` bytes, which also makes room for every whole-image decode of
    /// `budget` before it starts (the decode and the images kept stay under `limit`).
    init(limit: Int, budget: DecodeBudget? = nil, log: Logger = .discarding) {
        self.limit = limit
        self.log = log
        self.budget = budget ?? DecodeBudget(maxPixels: DecodeBudget.defaults.maxPixels, memoryLimit: limit, settings: .webTrigger)
        regions = TileRegions(budget: self.budget, log: log)
        self.budget.makeRoom { [weak self] bytes in
            self?.state.withLock { state in
                var total = state.images.reduce(0) { $0 + $1.image.pixels.count }
                while total + bytes > limit, !state.images.isEmpty {
                    total -= state.images.removeFirst().image.pixels.count
                }
            }
        }
    }

    /// The decoded full-size image of the photo at `path`; blocks the calling thread (a
    /// connection's own) while it is decoded.
    func image(of path: String) throws(ShutterError) -> RGBImage {
        let key = PreviewMaker.key(path)
        enum Step { case hit(RGBImage), wait(ImageJob<RGBImage>), make(ImageJob<RGBImage>) }
        let step = state.withLock { state -> Step in
            if let index = state.images.firstIndex(where: { $0.key == key }) {
                let hit = state.images.remove(at: index)
                state.images.append(hit)  // used last
                return .hit(hit.image)
            }
            if let job = state.making[key] { return .wait(job) }
            let job = ImageJob<RGBImage>()
            state.making[key] = job
            return .make(job)
        }
        switch step {
        case .hit(let image): return image
        case .wait(let job): return try job.result.get()
        case .make(let job):
            let started = ContinuousClock.now
            let result = Result { () throws(ShutterError) -> RGBImage in try Self.decode(path, budget: budget) }
            if case .success(let image) = result {
                log.debug("full-size image of '\(path)' decoded for tiles in \(String(format: "%.1f", (ContinuousClock.now - started) / .milliseconds(1))) ms (\(image.width)×\(image.height))")
            }
            state.withLock { state in
                state.making[key] = nil
                guard case .success(let image) = result else { return }
                state.images.append((key, image))
                var total = state.images.reduce(0) { $0 + $1.image.pixels.count }
                while total > limit, state.images.count > 1 {
                    total -= state.images.removeFirst().image.pixels.count
                }
            }
            job.finish(result)
            return try result.get()
        }
    }

    /// The most tiles a side can have: a side of the largest picture the budget takes.
    static let maximumTileIndex = 1 << 20

    /// The upright size of the photo at `path`: a JPEG's from its header (its whole decode
    /// then starts ahead), any other's by decoding it.
    func dimensions(of path: String) throws(ShutterError) -> (width: Int, height: Int) {
        guard let jpeg = try headerOfJPEG(path) else {
            let image = try image(of: path)
            return (image.width, image.height)
        }
        decodeAhead(path)
        return (jpeg.width, jpeg.height)
    }

    /// Tile `column`, `row` of the photo at `path` as a PNG; `nil` outside the image. The
    /// coordinates come from a request: they are checked before any arithmetic, and before
    /// the photo is decoded. A JPEG not yet decoded whole gives the tile from a decode of
    /// the tiles' region alone.
    func tile(of path: String, column: Int, row: Int) throws(ShutterError) -> Data? {
        guard (0..<Self.maximumTileIndex).contains(column), (0..<Self.maximumTileIndex).contains(row) else { return nil }
        let region: TileRegions.Region
        if let decoded = cached(path) {
            region = TileRegions.Region(image: decoded, x: 0, y: 0)
        } else if let jpeg = try headerOfJPEG(path) {
            guard column < (jpeg.width + Self.tileSize - 1) / Self.tileSize, row < (jpeg.height + Self.tileSize - 1) / Self.tileSize else { return nil }
            decodeAhead(path)
            let x = column * Self.tileSize, y = row * Self.tileSize
            let rect = TileRegions.Rect(x: x, y: y, width: min(Self.tileSize, jpeg.width - x), height: min(Self.tileSize, jpeg.height - y))
            let pixels = try regions.pixels(of: path, jpeg: jpeg.data, orientation: jpeg.orientation, width: jpeg.width, height: jpeg.height, rect: rect)
            var image = pixels.image
            image.iccProfile = jpeg.iccProfile
            region = TileRegions.Region(image: image, x: pixels.x, y: pixels.y)
        } else {
            region = TileRegions.Region(image: try image(of: path), x: 0, y: 0)
        }
        let x = column * Self.tileSize - region.x, y = row * Self.tileSize - region.y
        guard column * Self.tileSize < region.x + region.image.width, row * Self.tileSize < region.y + region.image.height, x >= 0, y >= 0 else { return nil }
        return try PNGEncoder.encode(region.image, x: x, y: y, width: Self.tileSize, height: Self.tileSize)
    }

    /// The full-size image of `path` when it is decoded already.
    private func cached(_ path: String) -> RGBImage? {
        let key = PreviewMaker.key(path)
        return state.withLock { state in
            guard let index = state.images.firstIndex(where: { $0.key == key }) else { return nil }
            let hit = state.images.remove(at: index)
            state.images.append(hit)  // used last
            return hit.image
        }
    }

    /// A JPEG's bytes, upright size, orientation and profile, read from its header
    /// (checked against the pixel budget); `nil` for a photo of another format. Read once
    /// for all the tiles of a photo asked for one after the other, not once per tile.
    private func headerOfJPEG(_ path: String) throws(ShutterError) -> JPEGHeader? {
        guard PhotoFormat(path) == .jpeg else { return nil }
        let key = PreviewMaker.key(path)  // size and time: a file replaced is read anew
        if let kept = state.withLock({ state in state.headers.first { $0.key == key }?.header }) { return kept }
        let jpeg = try PhotoFile.map(path)
        guard let size = JPEGDecoder.dimensions(jpeg) else { throw ShutterError(.unexpected, "'\(path)' is not a JPEG libturbojpeg can read") }
        try budget.checkPixels(width: size.width, height: size.height, of: "the photo")
        let metadata = JPEGMetadata(jpeg)
        let swaps = metadata.orientation >= 5 && metadata.orientation <= 8
        let header = JPEGHeader(data: jpeg, width: swaps ? size.height : size.width, height: swaps ? size.width : size.height,
                                orientation: metadata.orientation, iccProfile: metadata.iccProfile)
        guard jpeg.count <= Self.largestKeptJPEG else { return header }
        state.withLock { state in
            state.headers.removeAll { $0.key == key }
            state.headers.append((key, header))
            if state.headers.count > Self.keptHeaders { state.headers.removeFirst(state.headers.count - Self.keptHeaders) }
        }
        return header
    }

    /// Decodes the JPEG at `path` whole on a thread of its own, at the sinks' priority
    /// (nice 10: a store and its answer go first), unless it is decoded or being decoded.
    /// One at a time: a photo asked for while one is decoded comes next, in the place of
    /// any asked for before it (a burst passing by costs one decode, not one per shot).
    func decodeAhead(_ path: String) {
        guard PhotoFormat(path) == .jpeg else { return }
        let key = PreviewMaker.key(path)
        let start = state.withLock { state -> Bool in
            guard !state.images.contains(where: { $0.key == key }), state.making[key] == nil else { return false }
            guard !state.ahead.running else {
                state.ahead.next = path
                return false
            }
            state.ahead = (true, nil)
            return true
        }
        guard start else { return }
        OwnedThread.start("shutterpipe web full-size decode") { [self] in
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
            var path = path
            while true {
                do throws(ShutterError) { _ = try image(of: path) } catch { log.debug("the full-size image of '\(path)' was not decoded ahead: \(error.message)") }
                let next = state.withLock { state -> String? in
                    let next = state.ahead.next
                    state.ahead = (next != nil, nil)
                    return next
                }
                guard let next else { return }
                path = next
            }
        }
    }

    static func decode(_ path: String, budget: DecodeBudget) throws(ShutterError) -> RGBImage {
        try PhotoFile.check(path)
        switch PhotoFormat(path) {
        case .heif: return try HEIFDecoder.decode(path, budget: budget)
        case .tiff: return try TIFFDecoder.decode(path, budget: budget)
        case .raw:
            switch try FullSizeImage.rawSource(path, budget: budget) {
            case .jpeg(let jpeg, let orientation): return try JPEGDecoder.decodeAccurately(jpeg, budget: budget, orientation: orientation)
            case .pixels(let image): return image
            }
        case .jpeg, nil:
            let jpeg = try PhotoFile.map(path)
            let metadata = JPEGMetadata(jpeg)
            var image = try JPEGDecoder.decodeAccurately(jpeg, budget: budget, orientation: metadata.orientation)
            image.iccProfile = metadata.iccProfile
            return image
        }
    }
}
