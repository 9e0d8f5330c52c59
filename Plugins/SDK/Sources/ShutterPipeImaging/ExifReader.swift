import CExif
import Foundation
import ShutterPipeKit

/// Reads a shot's EXIF summary from its file: exposure, aperture, ISO, focal length, lens,
/// orientation, capture time, model and serial. JPEGs with libexif; RAW files with LibRaw
/// (``RawMetadataReader``); HEIF files' Exif block through libheif (``HEIFMetadataReader``),
/// then libexif.
public enum ExifReader {
    public static func summary(of path: String) -> ExifSummary {
        switch FileKind.of(path) {
        case .raw: return RawMetadataReader.summary(of: path)
        case .heif: return HEIFMetadataReader.exif(of: path).map(summary(ofBlock:)) ?? ExifSummary()
        case .jpeg, .tiff, nil: break
        @unknown default: break
        }
        guard let exif = exif_data_new_from_file(path) else { return ExifSummary() }
        defer { exif_data_unref(exif) }
        return summary(of: exif)
    }

    /// The summary of a JPEG's Exif APP1, from its first bytes in memory (the header is
    /// enough; no file is read); `nil` when they hold no whole Exif segment.
    public static func summary(ofJPEGHeader bytes: Data) -> ExifSummary? {
        let walk = JPEGSegments(bytes)
        guard let segment = walk.first(0xE1, startingWith: JPEGSegments.exifHeader, in: bytes) else { return nil }
        return summary(ofBlock: bytes[segment.payload])
    }

    /// The summary of an Exif block that starts with `Exif\0\0` and a TIFF header.
    public static func summary(ofBlock block: Data) -> ExifSummary {
        let exif = block.withUnsafeBytes { raw in exif_data_new_from_data(raw.bindMemory(to: UInt8.self).baseAddress, UInt32(raw.count)) }
        guard let exif else { return ExifSummary() }
        defer { exif_data_unref(exif) }
        return summary(of: exif)
    }

    private static func summary(of exif: UnsafeMutablePointer<ExifData>) -> ExifSummary {
        var summary = ExifSummary()
        let order = exif_data_get_byte_order(exif)
        let ifds = withUnsafeBytes(of: exif.pointee.ifd) { Array($0.bindMemory(to: UnsafeMutablePointer<ExifContent>?.self)) }

        func entry(_ tag: ExifTag) -> UnsafeMutablePointer<ExifEntry>? {
            for content in ifds.compactMap({ $0 }) {
                if let found = exif_content_get_entry(content, tag), found.pointee.data != nil, found.pointee.components > 0 { return found }
            }
            return nil
        }
        func rational(_ tag: ExifTag) -> (UInt32, UInt32)? {
            guard let found = entry(tag), found.pointee.format == EXIF_FORMAT_RATIONAL else { return nil }
            let value = exif_get_rational(found.pointee.data, order)
            return value.denominator == 0 ? nil : (value.numerator, value.denominator)
        }
        func integer(_ tag: ExifTag) -> Int? {
            guard let found = entry(tag) else { return nil }
            switch found.pointee.format {
            case EXIF_FORMAT_SHORT: return Int(exif_get_short(found.pointee.data, order))
            case EXIF_FORMAT_LONG: return Int(exif_get_long(found.pointee.data, order))
            default: return nil
            }
        }
        func text(_ tag: ExifTag) -> String? {
            guard let found = entry(tag), found.pointee.format == EXIF_FORMAT_ASCII else { return nil }
            let bytes = UnsafeBufferPointer(start: found.pointee.data, count: Int(found.pointee.size))
            let trimmed = bytes.prefix { $0 != 0 }
            let value = String(decoding: trimmed, as: UTF8.self).trimmingCharacters(in: .whitespaces)
            return value.isEmpty ? nil : value
        }

        if let (numerator, denominator) = rational(EXIF_TAG_EXPOSURE_TIME) {
            if numerator >= denominator {
                let seconds = Double(numerator) / Double(denominator)
                summary.exposureTime = seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.1f", seconds)
            } else if numerator > 0 {
                summary.exposureTime = "1/\(Int((Double(denominator) / Double(numerator)).rounded()))"
            }
        }
        if let (numerator, denominator) = rational(EXIF_TAG_FNUMBER) { summary.aperture = (Double(numerator) / Double(denominator) * 10).rounded() / 10 }
        if let (numerator, denominator) = rational(EXIF_TAG_FOCAL_LENGTH) { summary.focalLength = (Double(numerator) / Double(denominator) * 10).rounded() / 10 }
        summary.iso = integer(EXIF_TAG_ISO_SPEED_RATINGS)
        summary.orientation = integer(EXIF_TAG_ORIENTATION).flatMap { (1...8).contains($0) ? $0 : nil }
        summary.lens = text(ExifTag(rawValue: 0xa434))  // LensModel
        summary.captureTime = text(EXIF_TAG_DATE_TIME_ORIGINAL)
        summary.serial = text(ExifTag(rawValue: 0xa431))  // BodySerialNumber
        summary.model = ExifSummary.modelName(make: text(EXIF_TAG_MAKE), model: text(EXIF_TAG_MODEL))
        return summary
    }
}
