import CExif
import Foundation

/// What shutterpipe uses libexif for: building a new EXIF block for a JPEG that has none,
/// and reading edited blocks back as an independent check. It never re-saves a camera's
/// block: libexif's rebuild damages MakerNotes (docs/benchmarks.md and the EXIF notes).
public enum LibExif {
    /// A minimal valid TIFF block for a JPEG without EXIF: the tags EXIF
    /// requires, with ExifVersion 0232, sRGB, the image's pixel size and the JFIF
    /// resolution, so `exiftool -validate` finds nothing to report.
    public static func baseBlock(width: Int, height: Int, resolution: (x: Int, y: Int, unit: Int)?,
                          order byteOrder: TIFFEditor.ByteOrder = .little) -> Data? {
        guard let exif = exif_data_new() else { return nil }
        defer { exif_data_unref(exif) }
        let order = byteOrder == .little ? EXIF_BYTE_ORDER_INTEL : EXIF_BYTE_ORDER_MOTOROLA
        exif_data_set_byte_order(exif, order)
        // A JPEG is "compressed" data: that makes fix() add the tags EXIF requires for it
        // (ComponentsConfiguration, PixelX/YDimension, YCbCrPositioning).
        exif_data_set_data_type(exif, EXIF_DATA_TYPE_COMPRESSED)
        exif_data_fix(exif)
        let ifds = exif.pointee.ifd
        if let entry = exif_content_get_entry(ifds.2, EXIF_TAG_EXIF_VERSION), entry.pointee.size == 4 {
            Array("0232".utf8).withUnsafeBytes { entry.pointee.data.update(from: $0.bindMemory(to: UInt8.self).baseAddress!, count: 4) }
        }
        if let entry = exif_content_get_entry(ifds.2, EXIF_TAG_COLOR_SPACE) { exif_set_short(entry.pointee.data, order, 1) }
        for (tag, value) in [(EXIF_TAG_PIXEL_X_DIMENSION, width), (EXIF_TAG_PIXEL_Y_DIMENSION, height)] {
            guard let entry = exif_content_get_entry(ifds.2, tag) else { continue }
            if entry.pointee.format == EXIF_FORMAT_SHORT, value <= 65_535 {
                exif_set_short(entry.pointee.data, order, ExifShort(value))
            } else if entry.pointee.format == EXIF_FORMAT_LONG {
                exif_set_long(entry.pointee.data, order, ExifLong(value))
            }
        }
        if let resolution {
            for (tag, value) in [(EXIF_TAG_X_RESOLUTION, resolution.x), (EXIF_TAG_Y_RESOLUTION, resolution.y)] {
                if let entry = exif_content_get_entry(ifds.0, tag) {
                    exif_set_rational(entry.pointee.data, order, ExifRational(numerator: ExifLong(value), denominator: 1))
                }
            }
            if let entry = exif_content_get_entry(ifds.0, EXIF_TAG_RESOLUTION_UNIT) {
                exif_set_short(entry.pointee.data, order, ExifShort(resolution.unit == 2 ? 3 : 2))
            }
        }
        var buffer: UnsafeMutablePointer<UInt8>?
        var size: UInt32 = 0
        exif_data_save_data(exif, &buffer, &size)
        guard let buffer, size > 6 else { return nil }
        defer { free(buffer) }
        // The saved data starts with the "Exif\0\0" identifier; the TIFF block follows.
        return Data(bytes: buffer + 6, count: Int(size) - 6)
    }

    /// Reads `tiff` with libexif (its own parser, loading options that neither drop nor
    /// invent tags) and returns the raw bytes of each requested (IFD, tag).
    public static func readBack(_ tiff: Data, tags: [(ifd: Int, tag: UInt16)]) -> [Data?] {
        guard let exif = exif_data_new() else { return tags.map { _ in nil } }
        defer { exif_data_unref(exif) }
        exif_data_unset_option(exif, EXIF_DATA_OPTION_IGNORE_UNKNOWN_TAGS)
        exif_data_unset_option(exif, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION)
        var block = Data(JPEGLayout.exifHeader)
        block.append(tiff)
        block.withUnsafeBytes { raw in
            exif_data_load_data(exif, raw.bindMemory(to: UInt8.self).baseAddress, UInt32(raw.count))
        }
        let ifds = withUnsafeBytes(of: exif.pointee.ifd) { Array($0.bindMemory(to: UnsafeMutablePointer<ExifContent>?.self)) }
        return tags.map { ifd, tag in
            guard ifd < ifds.count, let content = ifds[ifd], let entry = exif_content_get_entry(content, CExif.ExifTag(rawValue: UInt32(tag))),
                  let data = entry.pointee.data else { return nil }
            return Data(bytes: data, count: Int(entry.pointee.size))
        }
    }

    /// libexif's number for a tag name, for checking our table against its.
    public static func tagNumber(named name: String) -> UInt16 {
        UInt16(exif_tag_from_name(name).rawValue)
    }

    /// IFD indices as libexif numbers them.
    public static let ifd0 = 0, exifIFD = 2, gpsIFD = 3
}
