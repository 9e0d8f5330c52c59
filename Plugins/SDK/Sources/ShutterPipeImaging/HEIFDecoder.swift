import CHeif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// HEIF and HEIC photos (Canon R-series, Sony, phones) decoded with libheif, upright (libheif
/// applies the file's rotation and mirroring as it decodes), with their ICC profile.
public enum HEIFDecoder {
    public static func decode(_ path: String, budget: DecodeBudget = .defaults) throws(ShutterError) -> RGBImage {
        try ImageLibrary.require(.heif, for: "a preview of '\(PathName.lastComponent(path))'")
        guard let context = heif_context_alloc() else { throw ShutterError(.unexpected, "libheif: cannot start") }
        defer { heif_context_free(context) }
        // libheif's own bound (a square of that side), besides ours below.
        heif_context_set_maximum_image_size_limit(context, Int32(min(Double(Int32.max), Double(budget.maxPixels).squareRoot().rounded(.up))))
        try check(heif_context_read_from_file(context, path, nil), "cannot read the HEIF file '\(path)'")
        var handle: OpaquePointer?
        try check(heif_context_get_primary_image_handle(context, &handle), "'\(path)' has no primary image")
        defer { heif_image_handle_release(handle) }
        let declared = (width: Int(heif_image_handle_get_width(handle)), height: Int(heif_image_handle_get_height(handle)))
        return try budget.decodeWhole("'\(PathName.lastComponent(path))'", width: declared.width, height: declared.height, cost: .heif) { () throws(ShutterError) -> RGBImage in
            try decodePrimary(handle, path: path)
        }
    }

    private static func decodePrimary(_ handle: OpaquePointer?, path: String) throws(ShutterError) -> RGBImage {
        var image: OpaquePointer?
        try check(heif_decode_image(handle, &image, heif_colorspace_RGB, heif_chroma_interleaved_RGB, nil), "cannot decode '\(path)'")
        defer { heif_image_release(image) }
        let width = Int(heif_image_get_width(image, heif_channel_interleaved))
        let height = Int(heif_image_get_height(image, heif_channel_interleaved))
        var stride: Int32 = 0
        guard width > 0, height > 0, let plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride) else {
            throw ShutterError(.unexpected, "libheif gave no pixels for '\(path)'")
        }
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        pixels.withUnsafeMutableBufferPointer { out in
            for row in 0..<height {
                (out.baseAddress! + row * width * 3).update(from: plane + row * Int(stride), count: width * 3)
            }
        }
        return RGBImage(pixels: pixels, width: width, height: height, iccProfile: profile(handle))
    }

    /// The image's ICC profile (an iPhone's Display P3, say), when it carries one.
    private static func profile(_ handle: OpaquePointer?) -> Data? {
        let type = heif_image_handle_get_color_profile_type(handle)
        guard type == heif_color_profile_type_prof || type == heif_color_profile_type_rICC else { return nil }
        let size = heif_image_handle_get_raw_color_profile_size(handle)
        guard size > 0, size < 4 << 20 else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        guard heif_image_handle_get_raw_color_profile(handle, &bytes).code == heif_error_Ok else { return nil }
        return Data(bytes)
    }

    private static func check(_ error: heif_error, _ what: String) throws(ShutterError) {
        guard error.code != heif_error_Ok else { return }
        throw ShutterError(.unexpected, "\(what): \(error.message.map { String(cString: $0) } ?? "libheif error \(error.code.rawValue)")")
    }
}
