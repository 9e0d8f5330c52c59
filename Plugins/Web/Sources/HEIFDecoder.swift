import CHeif
import Foundation
import ShutterPipeKit

/// HEIF and HEIC photos (Canon R-series, Sony, phones) decoded with libheif, upright (libheif
/// applies the file's rotation and mirroring as it decodes).
enum HEIFDecoder {
    static func decode(_ path: String) throws(ShutterError) -> RGBImage {
        guard let context = heif_context_alloc() else { throw ShutterError(.unexpected, "libheif: cannot start") }
        defer { heif_context_free(context) }
        try check(heif_context_read_from_file(context, path, nil), "cannot read the HEIF file '\(path)'")
        var handle: OpaquePointer?
        try check(heif_context_get_primary_image_handle(context, &handle), "'\(path)' has no primary image")
        defer { heif_image_handle_release(handle) }
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
        return RGBImage(pixels: pixels, width: width, height: height)
    }

    private static func check(_ error: heif_error, _ what: String) throws(ShutterError) {
        guard error.code != heif_error_Ok else { return }
        throw ShutterError(.unexpected, "\(what): \(error.message.map { String(cString: $0) } ?? "libheif error \(error.code.rawValue)")")
    }
}
