import Foundation

/// Finds the small JPEG a camera puts at the front of a photo, so that a display can
/// paint it while the rest of the file is still coming: the EXIF thumbnail of a JPEG
/// (IFD1 of its APP1 "Exif" segment, about 160×120) or of a TIFF-based RAW (IFD0 or
/// IFD1 of the file itself: CR2, NEF, DNG, ARW).
///
/// Fed the first bytes of a download, it says where the thumbnail lies, or that more
/// bytes are needed, or that there is none. The bytes are a camera's: every offset is
/// checked before use, the thumbnail must be a JPEG (FFD8 … ) of at most
/// ``largest`` bytes, and nothing past ``scanned`` bytes is ever asked for.
public enum ExifThumbnail {
    /// What the first bytes of a file say.
    public enum Finding: Equatable, Sendable {
        /// The thumbnail's bytes, as a range of the file.
        case at(Range<Int>)
        /// Not decided yet: the next `Int` bytes of the file at least are needed.
        case needs(Int)
        /// The file has no thumbnail in its first ``scanned`` bytes, or is not a JPEG or TIFF.
        case none
    }

    /// The largest thumbnail taken.
    public static let largest = 512 << 10
    /// How far into a file a thumbnail is looked for.
    public static let scanned = 2 << 20

    /// Where the thumbnail of the file whose first bytes are `bytes` lies.
    public static func find(in bytes: UnsafeRawBufferPointer) -> Finding {
        let reader = Reader(bytes: bytes)
        guard bytes.count >= 4 else { return .needs(4) }
        if bytes[0] == 0xFF && bytes[1] == 0xD8 { return inJPEG(reader) }
        if (bytes[0] == 0x49 && bytes[1] == 0x49) || (bytes[0] == 0x4D && bytes[1] == 0x4D) { return inTIFF(reader, at: 0) }
        return .none
    }

    /// The thumbnail of `data` (a whole file, or its first bytes), if it is there whole.
    public static func thumbnail(of data: Data) -> Data? {
        let finding = data.withUnsafeBytes { find(in: $0) }
        guard case .at(let range) = finding else { return nil }
        return data.subdata(in: data.startIndex + range.lowerBound..<data.startIndex + range.upperBound)
    }

    /// The EXIF orientation (1-8) in the first bytes of a JPEG, 1 when it says none.
    public static func orientation(in bytes: UnsafeRawBufferPointer) -> Int {
        let reader = Reader(bytes: bytes)
        guard reader.count >= 4, reader.byte(0) == 0xFF, reader.byte(1) == 0xD8,
              case .at(let tiff, let end) = exifSegment(reader) else { return 1 }
        let segment = Reader(bytes: reader.bytes, limit: min(reader.count, end))
        guard segment.byte(tiff) == segment.byte(tiff + 1), segment.byte(tiff) == 0x49 || segment.byte(tiff) == 0x4D else { return 1 }
        let little = segment.byte(tiff) == 0x49
        let ifd = tiff + segment.number(tiff + 4, 4, little)
        let entries = segment.number(ifd, 2, little)
        for entry in 0..<min(entries, 1000) where segment.number(ifd + 2 + entry * 12, 2, little) == 0x0112 {
            let value = segment.number(ifd + 2 + entry * 12 + 8, 2, little)
            return (1...8).contains(value) ? value : 1
        }
        return 1
    }

    /// Where a JPEG's APP1 "Exif" segment is: its TIFF header and the segment's end.
    private enum ExifPlace { case at(tiff: Int, end: Int), needs(Int), none }

    /// Walks a JPEG's segments (after SOI) to its APP1 "Exif", stopping at the scan.
    private static func exifSegment(_ reader: Reader) -> ExifPlace {
        var index = 2
        while true {
            guard index + 4 <= reader.count else { return .needs(index + 4) }
            guard reader.byte(index) == 0xFF else { return .none }
            let marker = reader.byte(index + 1)
            if marker == 0xDA || marker == 0xD9 { return .none }  // the scan: no APP1 before it
            let length = Int(reader.byte(index + 2)) << 8 | Int(reader.byte(index + 3))
            guard length >= 2 else { return .none }
            if marker == 0xE1 {
                // "Exif\0\0", then a TIFF header: offsets count from that header.
                guard index + 10 <= reader.count else { return .needs(index + 10) }
                if reader.matches(index + 4, [0x45, 0x78, 0x69, 0x66, 0, 0]) { return .at(tiff: index + 10, end: index + 2 + length) }
            }
            index += 2 + length
            guard index < scanned else { return .none }
        }
    }

    private static func inJPEG(_ reader: Reader) -> Finding {
        switch exifSegment(reader) {
        case .at(let tiff, let end):
            guard end <= reader.count else { return .needs(end) }
            return inTIFF(Reader(bytes: reader.bytes, limit: end), at: tiff)
        case .needs(let more): return .needs(more)
        case .none: return .none
        }
    }

    /// Looks in IFD0 and IFD1 of the TIFF structure whose header is at `tiff` for
    /// JPEGInterchangeFormat (0x0201) and its length (0x0202).
    private static func inTIFF(_ reader: Reader, at tiff: Int) -> Finding {
        guard tiff + 8 <= reader.count else { return reader.need(tiff + 8) }
        let little: Bool
        switch (reader.byte(tiff), reader.byte(tiff + 1)) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return .none
        }
        guard reader.number(tiff + 2, 2, little) == 42 else { return .none }
        var ifd = reader.number(tiff + 4, 4, little)
        for _ in 0..<2 {
            guard ifd >= 8, tiff + ifd < scanned else { return .none }
            let start = tiff + ifd
            guard start + 2 <= reader.count else { return reader.need(start + 2) }
            let entries = reader.number(start, 2, little)
            guard entries < 1000 else { return .none }
            let end = start + 2 + entries * 12 + 4
            guard end <= reader.count else { return reader.need(end) }
            var offset: Int?
            var length: Int?
            for entry in 0..<entries {
                let at = start + 2 + entry * 12
                let tag = reader.number(at, 2, little)
                let type = reader.number(at + 2, 2, little)
                // LONG (4) as the standard says; SHORT (3) as a few writers do.
                let value = type == 3 ? reader.number(at + 8, 2, little) : reader.number(at + 8, 4, little)
                if tag == 0x0201 { offset = value }
                if tag == 0x0202 { length = value }
            }
            if let offset, let length, length > 4, length <= largest, offset > 0 {
                let range = tiff + offset..<tiff + offset + length
                guard range.upperBound <= scanned else { return .none }
                guard range.upperBound <= reader.count else { return reader.need(range.upperBound) }
                guard reader.byte(range.lowerBound) == 0xFF, reader.byte(range.lowerBound + 1) == 0xD8 else { return .none }
                return .at(range)
            }
            ifd = reader.number(end - 4, 4, little)
            if ifd == 0 { return .none }
        }
        return .none
    }

    /// Reads within the first `limit` bytes (a segment's end, or the bytes there are).
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        let count: Int
        /// The segment's end, when reading within one.
        let limit: Int?

        init(bytes: UnsafeRawBufferPointer, limit: Int? = nil) {
            self.bytes = bytes
            self.limit = limit
            self.count = min(bytes.count, limit ?? bytes.count)
        }

        /// More bytes are needed; none that lie past the segment would help.
        func need(_ end: Int) -> Finding {
            if let limit, end > limit { return .none }
            return .needs(end)
        }

        func byte(_ at: Int) -> UInt8 { at >= 0 && at < count ? bytes[at] : 0 }

        func matches(_ at: Int, _ expected: [UInt8]) -> Bool {
            expected.indices.allSatisfy { byte(at + $0) == expected[$0] }
        }

        func number(_ at: Int, _ width: Int, _ little: Bool) -> Int {
            guard at >= 0, at + width <= count else { return 0 }
            return (0..<width).reduce(0) { value, index in
                little ? value | Int(bytes[at + index]) << (8 * index) : value << 8 | Int(bytes[at + index])
            }
        }
    }
}
