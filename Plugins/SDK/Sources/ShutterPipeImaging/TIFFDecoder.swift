import CTIFF
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// TIFF photos (scanners, editors' exports, some cameras' TIFF mode) decoded with libtiff's
/// RGBA interface, which reads every layout and compression libtiff knows (8 or 16 bits,
/// strips or tiles, LZW, Deflate, JPEG), upright.
public enum TIFFDecoder {
    public static func decode(_ path: String, budget: DecodeBudget = .defaults) throws(ShutterError) -> RGBImage {
        try ImageLibrary.require(.tiff, for: "a preview of '\(PathName.lastComponent(path))'")
        sp_tiff_quiet()
        guard let tiff = TIFFOpen(path, "r") else {
            throw ShutterError(.unexpected, "libtiff cannot read '\(path)' as a TIFF")
        }
        defer { TIFFClose(tiff) }
        var width: UInt32 = 0, height: UInt32 = 0
        sp_tiff_size(tiff, &width, &height)
        // Its decoded size is checked before anything is decoded: a few hundred bytes of
        // header may declare a picture of gigabytes.
        let orientation = Int(sp_tiff_orientation(tiff))
        return try budget.decodeWhole("'\(PathName.lastComponent(path))'", width: Int(width), height: Int(height), cost: .tiff) { () throws(ShutterError) -> RGBImage in
            try decodeRaster(tiff, path: path, width: width, height: height, orientation: orientation)
        }
    }

    private static func decodeRaster(_ tiff: OpaquePointer, path: String, width: UInt32, height: UInt32, orientation: Int) throws(ShutterError) -> RGBImage {
        var raster = [UInt32](repeating: 0, count: Int(width) * Int(height))
        guard TIFFReadRGBAImageOriented(tiff, width, height, &raster, Int32(ORIENTATION_TOPLEFT), 0) == 1 else {
            throw ShutterError(.unexpected, "libtiff could not decode '\(path)' (a layout or compression it does not know)")
        }
        var pixels = [UInt8](repeating: 0, count: raster.count * 3)
        for (index, value) in raster.enumerated() {  // ABGR, red in the low byte
            pixels[index * 3] = UInt8(truncatingIfNeeded: value)
            pixels[index * 3 + 1] = UInt8(truncatingIfNeeded: value >> 8)
            pixels[index * 3 + 2] = UInt8(truncatingIfNeeded: value >> 16)
        }
        raster = []  // freed before an upright copy is made
        var profileSize: UInt32 = 0
        let profile = sp_tiff_icc_profile(tiff, &profileSize).map { Data(bytes: $0, count: Int(profileSize)) }
        let image = RGBImage(pixels: pixels, width: Int(width), height: Int(height), iccProfile: profile)
        // libtiff applies the flips of orientations 1–4, and takes 5–8 (the transposed
        // ones) for 1–4: what is left to do for those is a transpose, after a half turn
        // for 6 and 8.
        switch orientation {
        case 5, 7: return image.oriented(5)
        case 6, 8: return image.oriented(7)
        default: return image
        }
    }
}
