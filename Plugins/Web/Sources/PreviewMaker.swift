import CTurboJPEG
import Foundation
import ShutterPipeKit
import Synchronization

/// Downscaled JPEGs of stored photos for the page, made with libjpeg-turbo's scaled
/// decode: a 24 MP photo is decoded straight at 1/4 or 3/8 of its size, never at full
/// size, then encoded again. The long edge is the largest of libjpeg-turbo's scales (n/8)
/// that is at most `longEdge`. The last previews are cached.
final class PreviewMaker: Sendable {
    static let cacheSize = 32
    let longEdge: Int
    private let cache = Mutex<[(key: String, data: Data)]>([])

    init(longEdge: Int) {
        self.longEdge = longEdge
    }

    static func isJPEG(_ path: String) -> Bool {
        ["jpg", "jpeg"].contains((path as NSString).pathExtension.lowercased())
    }

    /// The preview of the JPEG at `path` (cached by path, size and modification time).
    func preview(of path: String) throws(ShutterError) -> Data {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        let key = "\(path)|\((attributes?[.size] as? Int) ?? 0)|\((attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)"
        if let hit = cache.withLock({ $0.first { $0.key == key }?.data }) { return hit }
        guard let source = FileManager.default.contents(atPath: path) else {
            throw ShutterError(.storageUnavailable, "cannot read '\(path)'", fix: "the photo was moved or removed since it was stored")
        }
        let made = try Self.scaled(source, longEdge: longEdge)
        cache.withLock { cache in
            cache.append((key, made))
            if cache.count > Self.cacheSize { cache.removeFirst(cache.count - Self.cacheSize) }
        }
        return made
    }

    /// `jpeg` decoded at the largest n/8 scale whose long edge is at most `longEdge`, and
    /// encoded again (quality 85).
    static func scaled(_ jpeg: Data, longEdge: Int, quality: Int32 = 85) throws(ShutterError) -> Data {
        guard let decoder = tjInitDecompress() else { throw ShutterError(.unexpected, "libturbojpeg: cannot start a decoder") }
        defer { tjDestroy(decoder) }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        let header = jpeg.withUnsafeBytes { raw in
            tjDecompressHeader3(decoder, raw.bindMemory(to: UInt8.self).baseAddress, UInt(raw.count), &width, &height, &subsampling, &colorspace)
        }
        guard header == 0, width > 0, height > 0 else { throw ShutterError(.unexpected, "not a JPEG libturbojpeg can read: \(reason(decoder))") }
        let edge = max(width, height)
        var factors: Int32 = 0
        let available = tjGetScalingFactors(&factors)
        var best = tjscalingfactor(num: 1, denom: 8)
        for index in 0..<Int(factors) {
            guard let factor = available?[index], factor.num <= factor.denom else { continue }  // never enlarge
            let scaled = (edge * factor.num + factor.denom - 1) / factor.denom
            let bestScaled = (edge * best.num + best.denom - 1) / best.denom
            if scaled <= Int32(longEdge) && scaled > bestScaled { best = factor }
        }
        let outWidth = (width * best.num + best.denom - 1) / best.denom
        let outHeight = (height * best.num + best.denom - 1) / best.denom
        var pixels = [UInt8](repeating: 0, count: Int(outWidth) * Int(outHeight) * 3)
        let decoded = jpeg.withUnsafeBytes { raw in
            tjDecompress2(decoder, raw.bindMemory(to: UInt8.self).baseAddress, UInt(raw.count), &pixels, outWidth, 0, outHeight,
                          Int32(TJPF_RGB.rawValue), Int32(TJFLAG_FASTDCT))
        }
        // A warning (a damaged tail, say) still gives an image.
        guard decoded == 0 || tjGetErrorCode(decoder) == Int32(TJERR_WARNING.rawValue) else {
            throw ShutterError(.unexpected, "libturbojpeg could not decode the photo: \(reason(decoder))")
        }
        guard let encoder = tjInitCompress() else { throw ShutterError(.unexpected, "libturbojpeg: cannot start an encoder") }
        defer { tjDestroy(encoder) }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let encoded = tjCompress2(encoder, pixels, outWidth, 0, outHeight, Int32(TJPF_RGB.rawValue), &output, &size,
                                  Int32(TJSAMP_420.rawValue), quality, Int32(TJFLAG_FASTDCT))
        defer { tjFree(output) }
        guard encoded == 0, let output else { throw ShutterError(.unexpected, "libturbojpeg could not encode the preview: \(reason(encoder))") }
        return Data(bytes: output, count: Int(size))
    }

    private static func reason(_ handle: tjhandle) -> String {
        tjGetErrorStr2(handle).map { String(cString: $0) } ?? "unknown error"
    }
}
