import Foundation
import ShutterPipeKit
import Synchronization

/// What decoding a photo may cost the session, checked from its header before any pixel
/// is decoded. A photo's header is a claim: a 300-byte JPEG may declare 65500×65500 pixels,
/// a 570 KB TIFF 200 million, and a decoder allocates what it is told.
///
/// - **Pixels**: no photo of more than ``maxPixels`` is decoded, for a preview or at 100 %
///   (200 MP by default: above every camera sensor sold, the largest being Phase One's
///   151 MP, and 600 MB once decoded to RGB; the web trigger's `maxMegapixels`).
/// - **Memory**: a whole-image decode (100 %, and the previews of HEIF, TIFF and RAW) may
///   need at most ``memoryLimit`` (the web trigger's `fullImageCacheMB`), reckoned per
///   format from the header (``Cost``). Before it starts, what the owner keeps decoded
///   gives room for it (``makeRoom``), so the two together stay under the limit.
/// - The refusals name the setting that raises each limit (``Settings``), as the owner
///   of the budget calls it.
/// - **One at a time**: whole-image decodes take turns, whichever request or thread asks;
///   so six requests for six 100 MP photos decode one after the other, not all at once.
///   They run on the connections' own threads (and the previews' thread), never on the
///   cooperative pool.
public final class DecodeBudget: Sendable {
    /// Peak bytes per pixel of a whole-image decode, as the decoders here allocate them.
    public struct Cost: Sendable {
        let bytesPerPixel: Int
        /// libjpeg-turbo's RGB output and the upright copy.
        static let jpeg = Cost(bytesPerPixel: 6)
        /// libheif's planes, its interleaved RGB and ours.
        static let heif = Cost(bytesPerPixel: 8)
        /// libtiff's RGBA raster and the RGB taken from it.
        static let tiff = Cost(bytesPerPixel: 7)
        /// LibRaw's sensor data (2), its four-colour image (8), the developed image and ours.
        static let rawFull = Cost(bytesPerPixel: 16)
        /// The same at half size: the image and the output are a quarter.
        static let rawHalf = Cost(bytesPerPixel: 6)
    }

    /// The names of the settings that raise the limits, for the fix a refusal gives.
    public struct Settings: Sendable {
        public var pixels: String
        public var memory: String

        public init(pixels: String, memory: String) {
            self.pixels = pixels
            self.memory = memory
        }
    }

    public let maxPixels: Int
    public let memoryLimit: Int
    public let settings: Settings
    private let turn = Mutex(())
    private let room = Mutex<(@Sendable (Int) -> Void)?>(nil)

    /// The defaults, for callers that were given no options (tests, tools).
    public static let defaults = DecodeBudget(maxPixels: 200_000_000, memoryLimit: 1024 << 20,
                                              settings: Settings(pixels: "the decode budget's pixels", memory: "the decode budget's memory"))

    public init(maxPixels: Int, memoryLimit: Int, settings: Settings) {
        self.maxPixels = maxPixels
        self.memoryLimit = memoryLimit
        self.settings = settings
    }

    /// What makes room for a decode of so many bytes (the full-image cache's eviction).
    public func makeRoom(with evict: @escaping @Sendable (Int) -> Void) {
        room.withLock { $0 = evict }
    }

    /// Refuses a picture of `width`×`height` (from its header) over the pixel budget, or
    /// a size that no image can have.
    public func checkPixels(width: Int, height: Int, of what: String) throws(ShutterError) {
        guard width > 0, height > 0 else { throw ShutterError(.unexpected, "\(what) declares \(width)×\(height) pixels: not a picture") }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= maxPixels else {
            throw ShutterError(.unexpected, "\(what) declares \(width)×\(height) pixels (\(Self.megapixels(overflow ? Int.max : pixels))), over the limit of \(Self.megapixels(maxPixels)): not decoded",
                               fix: "a damaged or forged file; for a larger real photo raise \(settings.pixels)")
        }
    }

    /// Decodes a whole `width`×`height` picture with `decode`, in its turn, once the
    /// pixel and memory budgets allow it.
    public func decodeWhole<Result>(_ what: String, width: Int, height: Int, cost: Cost, _ decode: () throws(ShutterError) -> Result) throws(ShutterError) -> Result {
        try checkPixels(width: width, height: height, of: what)
        let bytes = width * height * cost.bytesPerPixel
        guard bytes <= memoryLimit else {
            throw ShutterError(.unexpected, "\(what) (\(width)×\(height)) needs about \(bytes >> 20) MiB to decode, over the limit of \(memoryLimit >> 20) MiB: not decoded",
                               fix: "raise \(settings.memory) to show such photos at 100 %")
        }
        let evict = room.withLock { $0 }
        return try turn.withLock { _ throws(ShutterError) -> Result in
            evict?(bytes)
            return try decode()
        }
    }

    public static func megapixels(_ pixels: Int) -> String {
        pixels >= 10_000_000_000 ? "over 10,000 MP" : String(format: "%.1f MP", Double(pixels) / 1e6)
    }
}
