import Foundation
import ShutterPipeImaging
import ShutterPipeKit

/// When the camera says a photo was taken: the EXIF DateTimeOriginal of its first JPEG,
/// as the camera's clock read it (a local time, without a zone). `{capturetime}` in file
/// names; for a shot imported later (a card, a hot folder) it is the moment of the
/// exposure, not of the import.
enum CameraCaptureTime {
    /// libexif's index of the EXIF sub-IFD, and DateTimeOriginal's tag.
    private static let exifIFD = 2, dateTimeOriginal: UInt16 = 0x9003

    /// `YYYYMMDD-hhmmss` from the first JPEG file that carries a DateTimeOriginal.
    static func of(_ files: [CapturedFile]) -> String? {
        for file in files where JPEGLayout.looksLikeJPEG(file.data) {
            guard let layout = try? JPEGLayout(file.data), let segment = layout.exifSegments.first else { continue }
            let tiff = layout.payload(of: segment).dropFirst(JPEGLayout.exifHeader.count)
            guard let raw = LibExif.readBack(Data(tiff), tags: [(exifIFD, dateTimeOriginal)]).first ?? nil else { continue }
            if let text = fileNameText(String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)) { return text }
        }
        return nil
    }

    /// `2026:12:04 14:30:12` as `20261204-143012`; nil for anything else (a camera that
    /// never had its clock set writes `0000:00:00 00:00:00`, or blanks).
    static func fileNameText(_ exif: String) -> String? {
        let digits = exif.filter(\.isNumber)
        guard exif.count == 19, digits.count == 14, !digits.hasPrefix("0000") else { return nil }
        return String(digits.prefix(8)) + "-" + String(digits.suffix(6))
    }
}
