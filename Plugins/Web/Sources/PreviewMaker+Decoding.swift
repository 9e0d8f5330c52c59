import CTurboJPEG
import Foundation
import ShutterPipeKit

/// Decoding with libturbojpeg: a JPEG's size from its header (checked against the budget
/// before any pixel), and the scaled decode in the DCT that every preview starts from.
extension PreviewMaker {
    /// `jpeg` (or its smallest embedded preview that is at least `longEdge` long) decoded
    /// at the largest n/8 scale whose long edge is at most `longEdge`.
    ///
    /// The photo's size is checked against `budget`'s pixels first: a scaled decode still
    /// works through every block the header declares.
    static func decodeScaled(_ jpeg: Data, longEdge: Int, budget: DecodeBudget = .defaults) throws(ShutterError) -> (image: RGBImage, embedded: Bool) {
        guard let decoder = tjInitDecompress() else { throw ShutterError(.unexpected, "libturbojpeg: cannot start a decoder") }
        defer { tjDestroy(decoder) }
        guard let primary = header(jpeg, decoder) else { throw ShutterError(.unexpected, "not a JPEG libturbojpeg can read: \(reason(decoder))") }
        try budget.checkPixels(width: Int(primary.width), height: Int(primary.height), of: "the photo")
        // The smallest embedded preview that is still large enough, else the photo.
        let embedded = EmbeddedPreview.largeThumbnails(in: jpeg).compactMap { range -> (Data, (width: Int32, height: Int32))? in
            let image = jpeg[(jpeg.startIndex + range.lowerBound)..<(jpeg.startIndex + range.upperBound)]
            // An embedded image's header is a claim too: one over the budget is not a source.
            guard let size = header(image, decoder), max(size.width, size.height) >= longEdge,
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
        var pixels = [UInt8](repeating: 0, count: Int(outWidth) * Int(outHeight) * 3)
        let decoded = source.withUnsafeBytes { raw in
            tjDecompress2(decoder, raw.bindMemory(to: UInt8.self).baseAddress, UInt(raw.count), &pixels, outWidth, 0, outHeight,
                          Int32(TJPF_RGB.rawValue), Int32(TJFLAG_FASTDCT | TJFLAG_LIMITSCANS))
        }
        // A warning (a damaged tail, say) still gives an image.
        guard decoded == 0 || tjGetErrorCode(decoder) == Int32(TJERR_WARNING.rawValue) else {
            throw ShutterError(.unexpected, "libturbojpeg could not decode the photo: \(reason(decoder))")
        }
        return (RGBImage(pixels: pixels, width: Int(outWidth), height: Int(outHeight)), embedded != nil)
    }

    /// A JPEG's width and height, from its header; `nil` for what libturbojpeg cannot read.
    static func dimensions(_ jpeg: Data) -> (width: Int, height: Int)? {
        guard let decoder = tjInitDecompress() else { return nil }
        defer { tjDestroy(decoder) }
        return header(jpeg, decoder).map { (Int($0.width), Int($0.height)) }
    }

    static func header(_ jpeg: Data, _ decoder: tjhandle) -> (width: Int32, height: Int32)? {
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        let read = jpeg.withUnsafeBytes { raw in
            tjDecompressHeader3(decoder, raw.bindMemory(to: UInt8.self).baseAddress, UInt(raw.count), &width, &height, &subsampling, &colorspace)
        }
        return read == 0 && width > 0 && height > 0 ? (width, height) : nil
    }

    static func reason(_ handle: tjhandle) -> String {
        tjGetErrorStr2(handle).map { String(cString: $0) } ?? "unknown error"
    }
}
