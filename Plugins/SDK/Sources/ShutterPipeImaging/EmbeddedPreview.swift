import Foundation

/// The large previews a camera JPEG carries after its primary image, listed in its
/// Multi-Picture Format index (CIPA DC-007: APP2 "MPF\0"). Many cameras write one of
/// about 1600 to 1920 px for their own screen; exiftool shows it as PreviewImage.
/// Decoding it costs a fraction of decoding the photo, whose entropy-coded data has to be
/// read whole even by a scaled decode.
///
/// Only images typed "large thumbnail" (0x010001, 0x010002) count: the other secondary
/// images of an MPO (the second eye of a stereo pair, panorama frames) are other pictures.
public enum EmbeddedPreview {
    /// The byte ranges of `jpeg`'s large-thumbnail images, in index order. A damaged or
    /// missing index gives none.
    public static func largeThumbnails(in jpeg: Data) -> [Range<Int>] {
        jpeg.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8, let tiff = indexStart(bytes) else { return [] }
            return entries(bytes, tiff: tiff)
        }
    }

    /// Where the MPF index's TIFF header starts: in an APP2 segment before the first scan.
    private static func indexStart(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var index = 2
        while index + 4 <= bytes.count, bytes[index] == 0xFF {
            let marker = bytes[index + 1]
            if marker == 0xDA || marker == 0xD9 { return nil }  // the scan: no index before it
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            guard length >= 2, index + 2 + length <= bytes.count else { return nil }
            if marker == 0xE2, length >= 2 + 4 + 8, bytes[index + 4] == 0x4D, bytes[index + 5] == 0x50, bytes[index + 6] == 0x46, bytes[index + 7] == 0 {
                return index + 8
            }
            index += 2 + length
        }
        return nil
    }

    private static func entries(_ bytes: UnsafeBufferPointer<UInt8>, tiff: Int) -> [Range<Int>] {
        let little: Bool
        switch (bytes[tiff], bytes[tiff + 1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return []
        }
        func read(_ at: Int, _ width: Int) -> Int? {
            guard at >= 0, at + width <= bytes.count else { return nil }
            return (0..<width).reduce(0) { value, byte in
                little ? value | Int(bytes[at + byte]) << (8 * byte) : value << 8 | Int(bytes[at + byte])
            }
        }
        guard let ifd = read(tiff + 4, 4), let count = read(tiff + ifd, 2) else { return [] }
        var found: [Range<Int>] = []
        for field in 0..<min(count, 64) {
            let at = tiff + ifd + 2 + 12 * field
            guard read(at, 2) == 0xB002, let length = read(at + 4, 4), let offset = read(at + 8, 4) else { continue }
            for entry in 0..<min(length / 16, 64) {
                let base = tiff + offset + 16 * entry
                guard let attribute = read(base, 4), let size = read(base + 4, 4), let start = read(base + 8, 4) else { break }
                let kind = attribute & 0xFF_FFFF
                guard kind == 0x01_0001 || kind == 0x01_0002, start > 0, size > 4 else { continue }
                let range = (tiff + start)..<(tiff + start + size)
                guard range.upperBound <= bytes.count, bytes[range.lowerBound] == 0xFF, bytes[range.lowerBound + 1] == 0xD8 else { continue }
                found.append(range)
            }
        }
        return found
    }
}
