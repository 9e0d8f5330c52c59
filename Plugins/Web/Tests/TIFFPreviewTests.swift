#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeImaging
import ShutterPipeKit
import TestSupport
import Testing
@testable import WebTrigger

/// An uncompressed 8-bit RGB TIFF, `width`×`height`, as stored: white in the top-left
/// quarter, a dark grey elsewhere; with an Orientation tag.
func makeTIFF(width: Int, height: Int, orientation: Int) -> Data {
    var pixels = [UInt8](repeating: 40, count: width * height * 3)
    for y in 0..<(height / 2) { for x in 0..<(width / 2) { for c in 0..<3 { pixels[(y * width + x) * 3 + c] = 250 } } }
    let entries: [(UInt16, UInt16, UInt32, UInt32)] = [  // tag, type (3 short, 4 long), count, value or offset
        (256, 4, 1, UInt32(width)), (257, 4, 1, UInt32(height)), (258, 3, 3, 0 /* patched: offset of 8,8,8 */), (259, 3, 1, 1),
        (262, 3, 1, 2), (273, 4, 1, 0 /* patched: the pixels */), (274, 3, 1, UInt32(orientation)), (277, 3, 1, 3),
        (278, 4, 1, UInt32(height)), (279, 4, 1, UInt32(pixels.count)),
    ]
    let ifdSize = 2 + entries.count * 12 + 4
    let bitsOffset = UInt32(8 + ifdSize), pixelsOffset = bitsOffset + 6
    var data = Data([0x49, 0x49, 42, 0, 8, 0, 0, 0])
    func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
    append(UInt16(entries.count))
    for (tag, type, count, value) in entries {
        append(tag); append(type); append(count)
        let patched = tag == 258 ? bitsOffset : tag == 273 ? pixelsOffset : value
        if type == 3 && count == 1 { append(UInt16(patched)); append(UInt16(0)) } else { append(patched) }
    }
    append(UInt32(0))
    for _ in 0..<3 { append(UInt16(8)) }
    data.append(contentsOf: pixels)
    return data
}

@Suite("web previews of TIFF photos", .timeLimit(.minutes(2)))
struct TIFFPreviewTests {
    @Test("a TIFF is previewed through libtiff, turned upright for each orientation; LZW-compressed (tiffcp) it gives the same picture")
    func orientations() async throws {
        let folder = TemporaryDirectory("tiff-preview")
        // Where the stored top-left quarter shows once upright, per orientation.
        let bright: [Int: (x: ClosedRange<Double>, y: ClosedRange<Double>)] = [
            1: (0.05...0.45, 0.05...0.45), 3: (0.55...0.95, 0.55...0.95), 6: (0.55...0.95, 0.05...0.45), 8: (0.05...0.45, 0.55...0.95),
            5: (0.05...0.45, 0.05...0.45), 7: (0.55...0.95, 0.55...0.95), 2: (0.55...0.95, 0.05...0.45), 4: (0.05...0.45, 0.55...0.95),
        ]
        for orientation in 1...8 {
            let path = folder.file("scan-\(orientation).tif")
            try makeTIFF(width: 600, height: 400, orientation: orientation).writeTestFile(path)
            let (preview, source) = try await offThePool { try PreviewMaker.make(path, longEdge: 300) }
            #expect(source == .tiff)
            let image = try JPEGDecoder.decodeScaled(preview, longEdge: 300).image
            let upright = orientation >= 5 ? (200, 300) : (300, 200)
            #expect((image.width, image.height) == upright, "orientation \(orientation): \(image.width)×\(image.height)")
            let region = try #require(bright[orientation])
            let inside = brightness(image, x: region.x, y: region.y)
            let opposite = brightness(image, x: (1 - region.x.upperBound)...(1 - region.x.lowerBound), y: (1 - region.y.upperBound)...(1 - region.y.lowerBound))
            #expect(inside > 200 && opposite < 80, "orientation \(orientation): \(inside) where the bright quarter belongs, \(opposite) opposite")
        }
        let lzw = folder.file("scan-lzw.tif")
        let copied = try await runProgram(["tiffcp", "-c", "lzw", folder.file("scan-6.tif"), lzw])
        try #require(copied.status == 0, "tiffcp: \(copied.errors)")
        let plain = try await offThePool { try TIFFDecoder.decode(folder.file("scan-6.tif")) }
        let packed = try await offThePool { try TIFFDecoder.decode(lzw) }
        #expect(meanDifference(plain, packed) == 0 && (packed.width, packed.height) == (400, 600))
        #expect(throws: ShutterError.self) { try TIFFDecoder.decode(folder.file("missing.tif")) }
    }
}
