import CZlib
import Foundation
import ShutterPipeKit

/// PNG, lossless: the page's 100 % tiles are the photo's decoded pixels exactly, which a
/// JPEG of them again would not be. Rows are filtered by their left neighbour (PNG's
/// "Sub") and deflated at zlib's fastest level: a 512×512 tile in a few milliseconds, at
/// about half its raw size for a photo.
public enum PNGEncoder {
    public static let signature = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])

    /// The `width`×`height` region of `image` at `x`, `y` (clipped to it), as a PNG; the
    /// image's colour profile goes in as its iCCP chunk.
    public static func encode(_ image: RGBImage, x: Int, y: Int, width: Int, height: Int) throws(ShutterError) -> Data {
        let width = max(0, min(width, image.width - x)), height = max(0, min(height, image.height - y))
        guard width > 0, height > 0, x >= 0, y >= 0 else { throw ShutterError(.unexpected, "an empty tile") }
        let rowBytes = width * 3
        var filtered = [UInt8](repeating: 0, count: height * (rowBytes + 1))
        image.pixels.withUnsafeBufferPointer { source in
            filtered.withUnsafeMutableBufferPointer { out in
                for row in 0..<height {
                    let from = ((y + row) * image.width + x) * 3, to = row * (rowBytes + 1)
                    out[to] = 1  // Sub
                    for index in 0..<rowBytes {
                        let left = index >= 3 ? source[from + index - 3] : 0
                        out[to + 1 + index] = source[from + index] &- left
                    }
                }
            }
        }
        var png = signature
        var header = Data()
        header.append(bigEndian: UInt32(width))
        header.append(bigEndian: UInt32(height))
        header += Data([8, 2, 0, 0, 0])  // 8 bits, RGB, deflate, adaptive filters, no interlace
        png += chunk("IHDR", header)
        if let iccProfile = image.iccProfile {
            png += chunk("iCCP", Data("icc\0".utf8) + Data([0]) + (try deflate(iccProfile, level: 6)))
        }
        png += chunk("IDAT", try deflate(Data(filtered), level: 1))
        png += chunk("IEND", Data())
        return png
    }

    private static func chunk(_ type: String, _ body: Data) -> Data {
        var out = Data()
        out.append(bigEndian: UInt32(body.count))
        let typed = Data(type.utf8) + body
        out += typed
        let crc = typed.withUnsafeBytes { raw in crc32(0, raw.bindMemory(to: UInt8.self).baseAddress, uInt(raw.count)) }
        out.append(bigEndian: UInt32(crc))
        return out
    }

    private static func deflate(_ data: Data, level: Int32) throws(ShutterError) -> Data {
        var size = compressBound(uLong(data.count))
        var out = [UInt8](repeating: 0, count: Int(size))
        let code = data.withUnsafeBytes { raw in compress2(&out, &size, raw.bindMemory(to: UInt8.self).baseAddress, uLong(data.count), level) }
        guard code == Z_OK else { throw ShutterError(.unexpected, "zlib could not compress a tile (\(code))") }
        return Data(out.prefix(Int(size)))
    }
}

extension Data {
    public mutating func append(bigEndian value: UInt32) {
        append(contentsOf: [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
    }
}
