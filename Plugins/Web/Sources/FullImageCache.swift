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
    private let state = Mutex<(images: [(key: String, image: RGBImage)], making: [String: ImageJob<RGBImage>])>(([], [:]))

    init(limit: Int, log: Logger = .discarding) {
        self.limit = limit
        self.log = log
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
            let result = Result { () throws(ShutterError) -> RGBImage in try Self.decode(path) }
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

    /// Tile `column`, `row` of the photo at `path` as a PNG; `nil` outside the image.
    func tile(of path: String, column: Int, row: Int) throws(ShutterError) -> Data? {
        let decoded = try image(of: path)
        let x = column * Self.tileSize, y = row * Self.tileSize
        guard column >= 0, row >= 0, x < decoded.width, y < decoded.height else { return nil }
        return try PNGEncoder.encode(decoded, x: x, y: y, width: Self.tileSize, height: Self.tileSize)
    }

    static func decode(_ path: String) throws(ShutterError) -> RGBImage {
        try PhotoFile.check(path)
        switch PhotoFormat(path) {
        case .heif: return try HEIFDecoder.decode(path)
        case .tiff: return try TIFFDecoder.decode(path)
        case .raw:
            switch try FullSizeImage.rawSource(path) {
            case .jpeg(let jpeg, let orientation): return try decodeAccurately(jpeg).oriented(orientation)
            case .pixels(let image): return image
            }
        case .jpeg, nil:
            let jpeg = try PhotoFile.map(path)
            let metadata = JPEGMetadata(jpeg)
            var image = try decodeAccurately(jpeg)
            image.iccProfile = metadata.iccProfile
            return image.oriented(metadata.orientation)
        }
    }

    /// `jpeg` at full size, with the accurate (slow) integer DCT and fancy upsampling:
    /// libjpeg's defaults, which Pillow and the browsers use too.
    static func decodeAccurately(_ jpeg: Data) throws(ShutterError) -> RGBImage {
        guard let decoder = tjInitDecompress() else { throw ShutterError(.unexpected, "libturbojpeg: cannot start a decoder") }
        defer { tjDestroy(decoder) }
        guard let size = PreviewMaker.dimensions(jpeg) else { throw ShutterError(.unexpected, "not a JPEG libturbojpeg can read") }
        var pixels = [UInt8](repeating: 0, count: size.width * size.height * 3)
        let decoded = jpeg.withUnsafeBytes { raw in
            tjDecompress2(decoder, raw.bindMemory(to: UInt8.self).baseAddress, UInt(raw.count), &pixels, Int32(size.width), 0, Int32(size.height),
                          Int32(TJPF_RGB.rawValue), 0)
        }
        guard decoded == 0 || tjGetErrorCode(decoder) == Int32(TJERR_WARNING.rawValue) else {
            throw ShutterError(.unexpected, "libturbojpeg could not decode the photo: \(tjGetErrorStr2(decoder).map { String(cString: $0) } ?? "?")")
        }
        return RGBImage(pixels: pixels, width: size.width, height: size.height)
    }
}
