import CHeif
import Foundation

/// The Exif block of a HEIF/HEIC photo's primary image, through libheif, without decoding
/// any pixels.
public enum HEIFMetadataReader {
    /// The block as libexif reads it: `Exif\0\0`, then the TIFF header and its IFDs; `nil`
    /// when the file has none or cannot be read.
    public static func exif(of path: String) -> Data? {
        guard (try? ImageLibrary.require(.heif, for: "reading a HEIF's EXIF")) != nil, let context = heif_context_alloc() else { return nil }
        defer { heif_context_free(context) }
        guard heif_context_read_from_file(context, path, nil).code == heif_error_Ok else { return nil }
        var handle: OpaquePointer?
        guard heif_context_get_primary_image_handle(context, &handle).code == heif_error_Ok, let handle else { return nil }
        defer { heif_image_handle_release(handle) }
        var id: heif_item_id = 0
        guard heif_image_handle_get_list_of_metadata_block_IDs(handle, "Exif", &id, 1) == 1 else { return nil }
        let size = heif_image_handle_get_metadata_size(handle, id)
        guard size > 4 else { return nil }
        var block = [UInt8](repeating: 0, count: size)
        guard heif_image_handle_get_metadata(handle, id, &block).code == heif_error_Ok else { return nil }
        // ISO/IEC 23008-12: a 4-byte big-endian offset from after itself to the TIFF header
        // (some writers put "Exif\0\0" in between).
        let offset = Int(block[0]) << 24 | Int(block[1]) << 16 | Int(block[2]) << 8 | Int(block[3])
        let tiff = 4 + offset
        guard offset >= 0, tiff + 8 <= size else { return nil }
        return Data("Exif".utf8) + Data([0, 0]) + Data(block[tiff...])
    }
}
