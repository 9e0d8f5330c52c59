import Foundation
import ShutterPipeImaging
import ShutterPipeKit

/// A photo at its full size, upright, as a JPEG: what a look at 100 % needs, never an
/// upscaled preview.
///
/// - A JPEG is served as it was stored (browsers turn it upright by its EXIF orientation).
/// - A HEIF or a TIFF is decoded whole and encoded (quality 92).
/// - A RAW gives its embedded JPEG when that is the sensor's full size (turned upright);
///   else LibRaw develops the whole sensor (a full demosaic: seconds for 24 MP).
enum FullSizeImage {
    static let quality: Int32 = 92

    static func make(_ path: String, budget: DecodeBudget = .defaults) throws(ShutterError) -> Data {
        try PhotoFile.check(path)
        switch PhotoFormat(path) {
        case .jpeg, nil:
            let data = try PhotoFile.map(path)
            return data
        case .heif:
            return try HEIFDecoder.decode(path, budget: budget).jpeg(quality: quality)
        case .tiff:
            return try TIFFDecoder.decode(path, budget: budget).jpeg(quality: quality)
        case .raw:
            switch try rawSource(path, budget: budget) {
            case .jpeg(let jpeg, let orientation):
                guard orientation != 1 else { return jpeg }
                return try JPEGDecoder.decodeAccurately(jpeg, budget: budget, orientation: orientation).jpeg(quality: quality)
            case .pixels(let image):
                return try image.jpeg(quality: quality)
            }
        }
    }

    /// A RAW's full-size picture: its embedded JPEG when that is the sensor's full size (a
    /// camera's "full size" may crop a few pixels), else LibRaw's full demosaic. The 100 %
    /// tiles (``FullImageCache``) make the same choice.
    static func rawSource(_ path: String, budget: DecodeBudget) throws(ShutterError) -> RawPreviewSource.Source {
        try RawPreviewSource.source(of: path, halfSize: false, budget: budget) { jpeg, sensorEdge in
            guard let size = JPEGDecoder.dimensions(jpeg) else { return false }
            return max(size.width, size.height) * 100 >= sensorEdge * 95
        }
    }
}
