import Foundation
import ShutterPipeImaging
import ShutterPipeKit

/// The histogram the loupe shows beside a shot: 256 counts for each of red, green, blue
/// and luma, over every pixel of its preview (what the page shows; the preview's long edge
/// is `previewSize`). Luma is ITU-R BT.601's (0.299 R + 0.587 G + 0.114 B, in 16-bit fixed
/// point and rounded, as Pillow's "L" conversion computes it), so an independent reader
/// gets the same counts from the same preview.
struct Histogram: Sendable {
    var red = [Int](repeating: 0, count: 256)
    var green = [Int](repeating: 0, count: 256)
    var blue = [Int](repeating: 0, count: 256)
    var luma = [Int](repeating: 0, count: 256)
    var width = 0
    var height = 0

    init(_ image: RGBImage) {
        width = image.width
        height = image.height
        image.pixels.withUnsafeBufferPointer { pixels in
            var index = 0
            while index + 2 < pixels.count {
                let r = Int(pixels[index]), g = Int(pixels[index + 1]), b = Int(pixels[index + 2])
                red[r] += 1
                green[g] += 1
                blue[b] += 1
                luma[(r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16] += 1
                index += 3
            }
        }
    }

    /// The histogram of a preview JPEG, decoded with the accurate DCT.
    init(jpeg: Data) throws(ShutterError) {
        self.init(try JPEGDecoder.decodeAccurately(jpeg))
    }

    var json: [String: Any] {
        ["red": red, "green": green, "blue": blue, "luma": luma, "width": width, "height": height, "of": "preview"]
    }
}
