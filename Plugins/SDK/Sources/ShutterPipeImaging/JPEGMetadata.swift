import Foundation
import ShutterPipeSupport

/// What the page needs from a JPEG's header segments, read without decoding it: its EXIF
/// orientation (a camera held upright writes 6 or 8, and the pixels stay sideways), and
/// its ICC colour profile (an Adobe RGB or Display P3 photo looks dull or garish when its
/// pixels are taken for sRGB).
///
/// libjpeg-turbo decodes pixels only: a preview or a tile made from them must be turned
/// upright here, and must carry the profile on, for the browser to colour-manage it.
public struct JPEGMetadata: Sendable {
    /// 1 (upright) to 8, as EXIF tag 0x0112 says; 1 when absent.
    public var orientation = 1
    /// The APP2 `ICC_PROFILE` segments, whole (marker and length included), in order.
    public var iccSegments: [Data] = []

    /// Whether EXIF says Adobe RGB without a profile: ColorSpace "uncalibrated" (0xFFFF)
    /// with InteropIndex "R03", as DCF cameras set to Adobe RGB write it.
    public var adobeRGBByEXIF = false

    /// The profile the segments carry, joined; else Adobe RGB's when EXIF says so
    /// (``AdobeRGBProfile``); `nil` for sRGB.
    public var iccProfile: Data? {
        guard !iccSegments.isEmpty else { return adobeRGBByEXIF ? AdobeRGBProfile.data : nil }
        return iccSegments.reduce(into: Data()) { $0 += $1.dropFirst(4 + 14) }  // marker, length, "ICC_PROFILE\0", sequence, count
    }

    public init() {}

    /// Reads the segments before the first scan of `jpeg` (``JPEGSegments``); a damaged
    /// header gives what was read before the damage.
    public init(_ jpeg: Data) {
        jpeg.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard bytes.count > 4 else { return }
            var profile: [(Int, Data)] = []
            for segment in JPEGSegments(bytes).segments {
                let body = segment.payload.lowerBound
                if segment.marker == 0xE1, segment.payload.count >= 6 + 8, JPEGSegments.starts(segment, in: bytes, with: JPEGSegments.exifHeader) {
                    let exif = Self.exif(bytes, tiff: body + 6, end: segment.range.upperBound)
                    orientation = exif.orientation ?? orientation
                    adobeRGBByEXIF = exif.adobeRGB
                } else if segment.marker == 0xE2, segment.payload.count >= 14, JPEGSegments.starts(segment, in: bytes, with: JPEGSegments.iccHeader) {
                    profile.append((Int(bytes[body + 12]), Data(bytes[segment.range])))
                }
            }
            iccSegments = profile.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    /// From the TIFF structure at `tiff`: tag 0x0112 of IFD0 (orientation), and whether
    /// the Exif IFD's ColorSpace (0xA001) is 0xFFFF with the Interop IFD's index "R03".
    private static func exif(_ bytes: UnsafeBufferPointer<UInt8>, tiff: Int, end: Int) -> (orientation: Int?, adobeRGB: Bool) {
        guard tiff + 8 <= end else { return (nil, false) }
        let little = bytes[tiff] == 0x49
        func read16(_ at: Int) -> Int? {
            guard at >= tiff, at + 2 <= end else { return nil }
            return little ? Int(bytes[at]) | Int(bytes[at + 1]) << 8 : Int(bytes[at]) << 8 | Int(bytes[at + 1])
        }
        func read32(_ at: Int) -> Int? {
            guard let high = read16(little ? at + 2 : at), let low = read16(little ? at : at + 2) else { return nil }
            return high << 16 | low
        }
        /// The entries of the IFD at `offset`: tag → where its value field is.
        func entries(_ offset: Int?) -> [Int: Int] {
            guard let offset, let count = read16(tiff + offset) else { return [:] }
            var found: [Int: Int] = [:]
            for entry in 0..<min(count, 512) {
                let at = tiff + offset + 2 + entry * 12
                guard let tag = read16(at) else { break }
                found[tag] = at + 8
            }
            return found
        }
        let first = entries(read32(tiff + 4))
        let orientation = first[0x0112].flatMap(read16).flatMap { (1...8).contains($0) ? $0 : nil }
        let exif = entries(first[0x8769].flatMap(read32))
        guard exif[0xA001].flatMap(read16) == 0xFFFF, let interop = exif[0xA005].flatMap(read32).map({ entries($0) })?[0x0001],
              interop + 3 <= end else { return (orientation, false) }
        return (orientation, bytes[interop] == 0x52 && bytes[interop + 1] == 0x30 && bytes[interop + 2] == 0x33)  // "R03"
    }

    /// `jpeg` (one libjpeg-turbo wrote: no profile of its own) with `profile` inserted
    /// after its start marker, in APP2 `ICC_PROFILE` segments (of at most 65,519 bytes each).
    public static func inserting(_ profile: Data?, into jpeg: Data) -> Data {
        guard let profile, !profile.isEmpty, jpeg.count > 2 else { return jpeg }
        let chunk = 65_519
        let count = (profile.count + chunk - 1) / chunk
        guard count < 256 else { return jpeg }
        var out = Data(jpeg.prefix(2))
        for index in 0..<count {
            let part = profile[(profile.startIndex + index * chunk)..<(profile.startIndex + min(profile.count, (index + 1) * chunk))]
            let length = 2 + 12 + 2 + part.count
            out += Data([0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)]) + Data("ICC_PROFILE\0".utf8) + Data([UInt8(index + 1), UInt8(count)]) + part
        }
        return out + jpeg.dropFirst(2)
    }
}
