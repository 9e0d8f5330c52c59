import CTurboJPEG
import Foundation
import ShutterPipeKit

/// The one decoder of JPEG pixels, on libjpeg-turbo: a picture's size from its header
/// (checked against a budget before any pixel), the scaled decode in the DCT that every
/// preview starts from, the whole accurate decode behind a look at 100 %, and the grey
/// decode a sharpness measure wants. Each call makes its own decoder handle, so any thread
/// may call it; none runs on the cooperative pool (a decode takes milliseconds to seconds).
public enum JPEGDecoder {
    /// `jpeg` (or its smallest embedded preview that is at least `longEdge` long) decoded
    /// at the largest n/8 scale whose long edge is at most `longEdge`; `embedded` says
    /// whether an embedded preview was the source.
    ///
    /// The photo's size is checked against `budget`'s pixels first: a scaled decode still
    /// works through every block the header declares.
    public static func decodeScaled(_ jpeg: Data, longEdge: Int, budget: DecodeBudget = .defaults) throws(ShutterError) -> (image: RGBImage, embedded: Bool) {
        let decoder = try Handle()
        guard let primary = decoder.header(jpeg) else { throw ShutterError(.unexpected, "not a JPEG libturbojpeg can read: \(decoder.reason)") }
        try budget.checkPixels(width: Int(primary.width), height: Int(primary.height), of: "the photo")
        // The smallest embedded preview that is still large enough, else the photo.
        let embedded = EmbeddedPreview.largeThumbnails(in: jpeg).compactMap { range -> (Data, (width: Int32, height: Int32))? in
            let image = jpeg[(jpeg.startIndex + range.lowerBound)..<(jpeg.startIndex + range.upperBound)]
            // An embedded image's header is a claim too: one over the budget is not a source.
            guard let size = decoder.header(image), max(size.width, size.height) >= longEdge,
                  (try? budget.checkPixels(width: Int(size.width), height: Int(size.height), of: "an embedded preview")) != nil else { return nil }
            return (image, size)
        }.min { max($0.1.width, $0.1.height) < max($1.1.width, $1.1.height) }
        let (source, size) = embedded ?? (jpeg, primary)
        let edge = max(size.width, size.height)
        var factors: Int32 = 0
        let available = tjGetScalingFactors(&factors)
        var best = tjscalingfactor(num: 1, denom: 8)
        for index in 0..<Int(factors) {
            guard let factor = available?[index], factor.num <= factor.denom else { continue }  // never enlarge
            let scaled = (edge * factor.num + factor.denom - 1) / factor.denom
            let bestScaled = (edge * best.num + best.denom - 1) / best.denom
            if scaled <= Int32(longEdge) && scaled > bestScaled { best = factor }
        }
        let outWidth = (size.width * best.num + best.denom - 1) / best.denom
        let outHeight = (size.height * best.num + best.denom - 1) / best.denom
        let pixels = try decoder.decode(source, width: outWidth, height: outHeight, format: TJPF_RGB, flags: Int32(TJFLAG_FASTDCT | TJFLAG_LIMITSCANS))
        return (RGBImage(pixels: pixels, width: Int(outWidth), height: Int(outHeight)), embedded != nil)
    }

    /// `jpeg` at full size, with the accurate (slow) integer DCT and fancy upsampling:
    /// libjpeg's defaults, which Pillow and the browsers use too. Turned upright for
    /// `orientation` in the same turn of `budget` (the upright copy is part of the
    /// decode's cost).
    public static func decodeAccurately(_ jpeg: Data, budget: DecodeBudget = .defaults, orientation: Int = 1) throws(ShutterError) -> RGBImage {
        let decoder = try Handle()
        guard let size = decoder.header(jpeg) else { throw ShutterError(.unexpected, "not a JPEG libturbojpeg can read: \(decoder.reason)") }
        return try budget.decodeWhole("the photo", width: Int(size.width), height: Int(size.height), cost: .jpeg) { () throws(ShutterError) -> RGBImage in
            let pixels = try decoder.decode(jpeg, width: size.width, height: size.height, format: TJPF_RGB, flags: Int32(TJFLAG_LIMITSCANS))
            return RGBImage(pixels: pixels, width: Int(size.width), height: Int(size.height)).oriented(orientation)
        }
    }

    /// `jpeg` decoded to one grey byte a pixel, at full size, when its header declares at
    /// most `maxPixels`.
    public static func decodeGrey(_ jpeg: Data, maxPixels: Int) throws(ShutterError) -> (pixels: [UInt8], width: Int, height: Int) {
        let decoder = try Handle()
        guard let size = decoder.header(jpeg) else { throw ShutterError(.unexpected, "not a JPEG libturbojpeg can read: \(decoder.reason)") }
        guard Int(size.width) * Int(size.height) <= maxPixels else {
            throw ShutterError(.unexpected, "a JPEG of \(size.width)×\(size.height) pixels, over the \(DecodeBudget.megapixels(maxPixels)) measured")
        }
        let grey = try decoder.decode(jpeg, width: size.width, height: size.height, format: TJPF_GRAY, flags: 0)
        return (grey, Int(size.width), Int(size.height))
    }

    /// A JPEG's width and height, from its header; `nil` for what libturbojpeg cannot read.
    public static func dimensions(_ jpeg: Data) -> (width: Int, height: Int)? {
        guard let decoder = try? Handle() else { return nil }
        return decoder.header(jpeg).map { (Int($0.width), Int($0.height)) }
    }

    /// One libturbojpeg decompressor, destroyed with this value.
    private final class Handle {
        let handle: tjhandle

        init() throws(ShutterError) {
            guard let handle = tjInitDecompress() else { throw ShutterError(.unexpected, "libturbojpeg: cannot start a decoder") }
            self.handle = handle
        }

        deinit { tjDestroy(handle) }

        var reason: String { tjGetErrorStr2(handle).map { String(cString: $0) } ?? "unknown error" }

        func header(_ jpeg: Data) -> (width: Int32, height: Int32)? {
            var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
            let read = jpeg.withUnsafeBytes { raw in
                tjDecompressHeader3(handle, raw.bindMemory(to: UInt8.self).baseAddress, UInt(raw.count), &width, &height, &subsampling, &colorspace)
            }
            return read == 0 && width > 0 && height > 0 ? (width, height) : nil
        }

        /// The pixels at `width`×`height` (one of libjpeg-turbo's scales of the picture).
        /// A warning (a damaged tail, say) still gives an image.
        func decode(_ jpeg: Data, width: Int32, height: Int32, format: TJPF, flags: Int32) throws(ShutterError) -> [UInt8] {
            let channels = format == TJPF_GRAY ? 1 : 3
            var pixels = [UInt8](repeating: 0, count: Int(width) * Int(height) * channels)
            let decoded = jpeg.withUnsafeBytes { raw in
                tjDecompress2(handle, raw.bindMemory(to: UInt8.self).baseAddress, UInt(raw.count), &pixels, width, 0, height, Int32(format.rawValue), flags)
            }
            guard decoded == 0 || tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue) else {
                throw ShutterError(.unexpected, "libturbojpeg could not decode the photo: \(reason)")
            }
            return pixels
        }
    }
}
