import CLibRaw
import Foundation
import ShutterPipeKit

/// The EXIF summary of a RAW file, through LibRaw: it reads the metadata of every format it
/// develops (the TIFF-based ones and CR3 alike) without decoding the sensor data.
public enum RawMetadataReader {
    public static func summary(of path: String) -> ExifSummary {
        var summary = ExifSummary()
        guard (try? ImageLibrary.require(.raw, for: "reading a RAW's EXIF")) != nil, let raw = libraw_init(0) else { return summary }
        defer { libraw_close(raw) }
        guard libraw_open_file(raw, path) == LIBRAW_SUCCESS.rawValue else { return summary }
        let other = raw.pointee.other
        if other.shutter > 0 {
            let seconds = Double(other.shutter)
            summary.exposureTime = seconds >= 1 ? (seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.1f", seconds))
                : "1/\(Int((1 / seconds).rounded()))"
        }
        if other.aperture > 0 { summary.aperture = (Double(other.aperture) * 10).rounded() / 10 }
        if other.iso_speed > 0 { summary.iso = Int(other.iso_speed.rounded()) }
        if other.focal_len > 0 { summary.focalLength = (Double(other.focal_len) * 10).rounded() / 10 }
        if other.timestamp > 0 {
            // EXIF's form, in local time, as the camera wrote it (LibRaw read it as local time).
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.dateFormat = "yyyy:MM:dd HH:mm:ss"
            summary.captureTime = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(other.timestamp)))
        }
        let lens = text(raw.pointee.lens.Lens)
        summary.lens = lens
        summary.serial = text(raw.pointee.shootinginfo.BodySerial)
        summary.model = ExifSummary.modelName(make: text(raw.pointee.idata.make), model: text(raw.pointee.idata.model))
        summary.orientation = [0: 1, 3: 3, 5: 8, 6: 6][Int(raw.pointee.sizes.flip)]
        return summary
    }

    /// A fixed-size C string field, trimmed; `nil` when empty.
    private static func text<T>(_ field: T) -> String? {
        let value = withUnsafeBytes(of: field) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self).trimmingCharacters(in: .whitespaces)
        }
        return value.isEmpty ? nil : value
    }
}
