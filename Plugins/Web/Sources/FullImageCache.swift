import CTurboJPEG
import Foundation
import ShutterPipeKit
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
final class FullImageCache: Sendable {
    static let tileSize = 512

    private let limit: Int
    private let log: Logger
    let budget: DecodeBudget
    private let state = Mutex<(images: [(key: String, image: RGBImage)], making: [String: ImageJob<RGBImage>])>(([], [:]))

    /// A cache of `limit` bytes, which also makes room for every whole-image decode of
    /// `budget` before it starts (the decode and the images kept stay under `limit`).
    init(limit: Int, budget: DecodeBudget? = nil, log: Logger = .discarding) {
        self.limit = limit
        self.log = log
        self.budget = budget ?? DecodeBudget(maxPixels: DecodeBudget.defaults.maxPixels, memoryLimit: limit)
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

    /// Tile `column`, `row` of the photo at `path` as a PNG; `nil` outside the image. The
    /// coordinates come from a request: they are checked before any arithmetic, and before
    /// the photo is decoded.
    func tile(of path: String, column: Int, row: Int) throws(ShutterError) -> Data? {
        guard (0..<Self.maximumTileIndex).contains(column), (0..<Self.maximumTileIndex).contains(row) else { return nil }
        let decoded = try image(of: path)
        guard column < (decoded.width + Self.tileSize - 1) / Self.tileSize, row < (decoded.height + Self.tileSize - 1) / Self.tileSize else { return nil }
        return try PNGEncoder.encode(decoded, x: column * Self.tileSize, y: row * Self.tileSize, width: Self.tileSize, height: Self.tileSize)
    }

    static func decode(_ path: String, budget: DecodeBudget) throws(ShutterError) -> RGBImage {
        try PhotoFile.check(path)
        switch PhotoFormat(path) {
        case .heif: return try HEIFDecoder.decode(path, budget: budget)
        case .tiff: return try TIFFDecoder.decode(path, budget: budget)
        case .raw:
            switch try FullSizeImage.rawSource(path, budget: budget) {
            case .jpeg(let jpeg, let orientation): return try decodeAccurately(jpeg, budget: budget, orientation: orientation)
            case .pixels(let image): return image
            }
        case .jpeg, nil:
            let jpeg = try PhotoFile.map(path)
            let metadata = JPEGMetadata(jpeg)
            var image = try decodeAccurately(jpeg, budget: budget, orientation: metadata.orientation)
            image.iccProfile = metadata.iccProfile
            return image
        }
    }

    /// `jpeg` at full size, with the accurate (slow) integer DCT and fancy upsampling:
    /// libjpeg's defaults, which Pillow and the browsers use too.
    /// Turned upright for `orientation` in the same turn of `budget` (the upright copy is
    /// part of the decode's cost).
    static func decodeAccurately(_ jpeg: Data, budget: DecodeBudget = .defaults, orientation: Int = 1) throws(ShutterError) -> RGBImage {
        guard let decoder = tjInitDecompress() else { throw ShutterError(.unexpected, "libturbojpeg: cannot start a decoder") }
        defer { tjDestroy(decoder) }
        guard let size = PreviewMaker.dimensions(jpeg) else { throw ShutterError(.unexpected, "not a JPEG libturbojpeg can read") }
        return try budget.decodeWhole("the photo", width: size.width, height: size.height, cost: .jpeg) { () throws(ShutterError) -> RGBImage in
            var pixels = [UInt8](repeating: 0, count: size.width * size.height * 3)
            let decoded = jpeg.withUnsafeBytes { raw in
                tjDecompress2(decoder, raw.bindMemory(to: UInt8.self).baseAddress, UInt(raw.count), &pixels, Int32(size.width), 0, Int32(size.height),
                              Int32(TJPF_RGB.rawValue), Int32(TJFLAG_LIMITSCANS))
            }
            guard decoded == 0 || tjGetErrorCode(decoder) == Int32(TJERR_WARNING.rawValue) else {
                throw ShutterError(.unexpected, "libturbojpeg could not decode the photo: \(tjGetErrorStr2(decoder).map { String(cString: $0) } ?? "?")")
            }
            return RGBImage(pixels: pixels, width: size.width, height: size.height).oriented(orientation)
        }
    }
}
