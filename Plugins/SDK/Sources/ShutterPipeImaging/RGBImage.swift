import CTurboJPEG
import Foundation
import ShutterPipeKit

/// Pixels, 8-bit RGB, row after row: what the RAW and HEIF decoders give, scaled,
/// turned upright and encoded as the page's JPEG preview. The colour profile of the photo
/// they came from goes with them into what is encoded (sRGB when there is none).
public struct RGBImage: Sendable {
    public var pixels: [UInt8]
    public var width: Int
    public var height: Int
    /// The ICC profile the pixels are in, when the photo carries one (Adobe RGB, Display P3).
    public var iccProfile: Data? = nil

    public init(pixels: [UInt8], width: Int, height: Int, iccProfile: Data? = nil) {
        self.pixels = pixels
        self.width = width
        self.height = height
        self.iccProfile = iccProfile
    }

    /// Shrunk by a whole factor (each output pixel the mean of a block), the smallest that
    /// brings the long edge to at most `longEdge`; unchanged when it already fits.
    public func downscaled(toLongEdge longEdge: Int) -> RGBImage {
        let factor = (max(width, height) + longEdge - 1) / max(1, longEdge)
        guard factor > 1 else { return self }
        let outWidth = width / factor, outHeight = height / factor
        var out = [UInt8](repeating: 0, count: outWidth * outHeight * 3)
        let area = factor * factor
        pixels.withUnsafeBufferPointer { source in
            for y in 0..<outHeight {
                for x in 0..<outWidth {
                    var sums = (0, 0, 0)
                    for dy in 0..<factor {
                        var index = ((y * factor + dy) * width + x * factor) * 3
                        for _ in 0..<factor {
                            sums.0 += Int(source[index]); sums.1 += Int(source[index + 1]); sums.2 += Int(source[index + 2])
                            index += 3
                        }
                    }
                    let target = (y * outWidth + x) * 3
                    out[target] = UInt8(sums.0 / area); out[target + 1] = UInt8(sums.1 / area); out[target + 2] = UInt8(sums.2 / area)
                }
            }
        }
        return RGBImage(pixels: out, width: outWidth, height: outHeight, iccProfile: iccProfile)
    }

    /// Turned upright for an EXIF orientation (1–8): 3 is 180°, 6 a quarter turn
    /// clockwise, 8 anticlockwise; the mirrored ones (2, 4, 5, 7) as well.
    public func oriented(_ orientation: Int) -> RGBImage {
        guard (2...8).contains(orientation) else { return self }
        let swaps = orientation >= 5
        let outWidth = swaps ? height : width, outHeight = swaps ? width : height
        var out = [UInt8](repeating: 0, count: pixels.count)
        for y in 0..<outHeight {
            for x in 0..<outWidth {
                let (sx, sy) = Self.storedPixel(shownAt: x, y, orientation: orientation, storedWidth: width, storedHeight: height)
                let source = (sy * width + sx) * 3, target = (y * outWidth + x) * 3
                out[target] = pixels[source]; out[target + 1] = pixels[source + 1]; out[target + 2] = pixels[source + 2]
            }
        }
        return RGBImage(pixels: out, width: outWidth, height: outHeight, iccProfile: iccProfile)
    }

    /// The pixel of a stored picture (`storedWidth`×`storedHeight`, before its EXIF
    /// orientation is applied) shown at (`x`, `y`) of the upright one: the one mapping
    /// behind a whole picture turned upright and a region of it (``TileRegions``).
    @inline(__always)
    public static func storedPixel(shownAt x: Int, _ y: Int, orientation: Int, storedWidth: Int, storedHeight: Int) -> (Int, Int) {
        switch orientation {
        case 2: return (storedWidth - 1 - x, y)
        case 3: return (storedWidth - 1 - x, storedHeight - 1 - y)
        case 4: return (x, storedHeight - 1 - y)
        case 5: return (y, x)
        case 6: return (y, storedHeight - 1 - x)
        case 7: return (storedWidth - 1 - y, storedHeight - 1 - x)
        case 8: return (storedWidth - 1 - y, x)
        default: return (x, y)
        }
    }

    /// Encoded as a JPEG with libjpeg-turbo, carrying the profile.
    public func jpeg(quality: Int32 = 85) throws(ShutterError) -> Data {
        guard let encoder = tjInitCompress() else { throw ShutterError(.unexpected, "libturbojpeg: cannot start an encoder") }
        defer { tjDestroy(encoder) }
        var output: UnsafeMutablePointer<UInt8>?
        var outputSize: UInt = 0
        let encoded = tjCompress2(encoder, pixels, Int32(width), 0, Int32(height), Int32(TJPF_RGB.rawValue), &output, &outputSize,
                                  Int32(TJSAMP_420.rawValue), quality, Int32(TJFLAG_FASTDCT))
        defer { tjFree(output) }
        guard encoded == 0, let output else {
            throw ShutterError(.unexpected, "libturbojpeg could not encode the preview: \(tjGetErrorStr2(encoder).map { String(cString: $0) } ?? "?")")
        }
        return JPEGMetadata.inserting(iccProfile, into: Data(bytes: output, count: Int(outputSize)))
    }
}

/// The photo formats the page shows, by extension (the catalogue's ``FileKind``).
public enum PhotoFormat: Equatable {
    case jpeg, heif, raw, tiff

    public init?(_ path: String) {
        switch FileKind.of(path) {
        case .jpeg: self = .jpeg
        case .heif: self = .heif
        case .raw: self = .raw
        case .tiff: self = .tiff
        case nil: return nil
        @unknown default: return nil  // a format a newer contract names: not shown
        }
    }
}
