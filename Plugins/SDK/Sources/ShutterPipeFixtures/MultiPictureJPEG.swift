import Foundation

/// Makes a Multi-Picture Format JPEG (CIPA DC-007), as cameras write one: the primary
/// image with an MPF index (APP2 "MPF\0") after its leading APP0/APP1 segments, and a
/// secondary image after its end. exiftool reads a large thumbnail as PreviewImage.
public enum MultiPictureJPEG {
    /// The MP type of the secondary image.
    public enum Kind: Int, Sendable {
        /// A large thumbnail of up to full-HD size: the preview cameras embed.
        case largeThumbnail = 0x01_0002
        /// The other eye of a stereo pair: another picture, not a preview.
        case disparity = 0x02_0002
    }

    /// `primary` with `secondary` appended and indexed as `kind`.
    public static func make(primary: Data, secondary: Data, kind: Kind = .largeThumbnail) -> Data {
        let bytes = [UInt8](primary)
        var insertAt = 2
        while insertAt + 4 <= bytes.count, bytes[insertAt] == 0xFF, bytes[insertAt + 1] == 0xE0 || bytes[insertAt + 1] == 0xE1 {
            insertAt += 2 + (Int(bytes[insertAt + 2]) << 8 | Int(bytes[insertAt + 3]))
        }
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(v >> (8 * $0) & 0xFF) } }
        // MP index IFD: version, number of images, MP entries (2 × 16 bytes) after the IFD.
        let ifdSize = 2 + 3 * 12 + 4
        let entriesOffset = 8 + ifdSize
        let segmentLength = 2 + 4 + entriesOffset + 32
        let primaryLength = primary.count + 2 + segmentLength
        let tiffStart = insertAt + 4 + 4  // marker, length, "MPF\0"
        let secondaryOffset = primaryLength - tiffStart
        var tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00] + le32(8) + le16(3)
        tiff += le16(0xB000) + le16(7) + le32(4) + Array("0100".utf8)
        tiff += le16(0xB001) + le16(4) + le32(1) + le32(2)
        tiff += le16(0xB002) + le16(7) + le32(32) + le32(entriesOffset)
        tiff += le32(0)
        tiff += le32(0x03_0000) + le32(primaryLength) + le32(0) + le16(0) + le16(0)
        tiff += le32(kind.rawValue) + le32(secondary.count) + le32(secondaryOffset) + le16(0) + le16(0)
        var segment: [UInt8] = [0xFF, 0xE2, UInt8(segmentLength >> 8), UInt8(segmentLength & 0xFF)] + Array("MPF".utf8) + [0]
        segment += tiff
        var out = primary
        out.insert(contentsOf: segment, at: out.startIndex + insertAt)
        out.append(secondary)
        return out
    }
}
