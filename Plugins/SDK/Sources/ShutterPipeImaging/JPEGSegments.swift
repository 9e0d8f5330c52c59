/// The segments of a JPEG's header, found by walking its markers from SOI to SOS: the one
/// walk of a JPEG's structure (the files sink splicing EXIF and XMP in, the catalogue
/// merging marks into a photo's XMP and reading a frame's place, the web page reading a
/// photo's orientation and colour profile).
///
/// Only the structure is read, from bytes that may come from anywhere: every length is
/// checked against the bytes there are, and the walk stops, saying where and why, at the
/// first thing that does not hold. What was read before it is kept, so that a reader that
/// can do with part of a header (a preview's orientation) takes it, and one that cannot
/// (a splice) refuses the file.
public struct JPEGSegments: Sendable {
    /// One marker segment before SOS.
    public struct Segment: Sendable, Equatable {
        /// The marker byte (0xE1 for APP1).
        public var marker: UInt8
        /// The whole segment, marker included, as offsets into the bytes walked.
        public var range: Range<Int>
        /// The payload after the two length bytes.
        public var payload: Range<Int>
    }

    /// How the walk ended.
    public enum End: Sendable, Equatable {
        /// At the SOS marker, at this offset: the image data starts there.
        case scan(at: Int)
        /// The bytes ended between two segments, before any SOS: a file's front, read
        /// in part.
        case truncated
        /// Something that cannot be a JPEG header, said in words ("segment 0xe1 at byte
        /// 20 runs past the end of the file").
        case damaged(String)
    }

    public static let exifHeader: [UInt8] = Array("Exif".utf8) + [0, 0]
    public static let xmpHeader: [UInt8] = Array("http://ns.adobe.com/xap/1.0/".utf8) + [0]
    public static let mpfHeader: [UInt8] = Array("MPF".utf8) + [0]
    public static let iccHeader: [UInt8] = Array("ICC_PROFILE".utf8) + [0]

    /// The segments between SOI and where the walk ended, in order.
    public private(set) var segments: [Segment] = []
    public private(set) var end: End

    /// Where the image data starts (its SOS marker), when the walk reached it.
    public var scanStart: Int? {
        if case .scan(let offset) = end { return offset }
        return nil
    }

    /// Whether `bytes` start like a JPEG (SOI then a marker).
    public static func looksLikeJPEG<Bytes: RandomAccessCollection>(_ bytes: Bytes) -> Bool where Bytes.Element == UInt8, Bytes.Index == Int {
        bytes.count >= 4 && bytes[bytes.startIndex] == 0xFF && bytes[bytes.startIndex + 1] == 0xD8 && bytes[bytes.startIndex + 2] == 0xFF
    }

    /// Walks the markers of `bytes` (which start with the JPEG's SOI). Offsets are
    /// `bytes`' own indices. Fill bytes (0xFF runs) before a marker are skipped; RSTn and
    /// TEM have no length.
    public init<Bytes: RandomAccessCollection>(_ bytes: Bytes) where Bytes.Element == UInt8, Bytes.Index == Int {
        end = .truncated
        guard bytes.count >= 2, bytes[bytes.startIndex] == 0xFF, bytes[bytes.startIndex + 1] == 0xD8 else {
            end = .damaged("not a JPEG (no SOI marker)")
            return
        }
        let last = bytes.endIndex
        var position = bytes.startIndex + 2
        while true {
            guard position < last else { end = .truncated; return }
            guard bytes[position] == 0xFF else {
                end = .damaged("expected a marker at byte \(position - bytes.startIndex), found 0x\(String(bytes[position], radix: 16))")
                return
            }
            var markerAt = position
            while markerAt < last && bytes[markerAt] == 0xFF { markerAt += 1 }
            guard markerAt < last else { end = .truncated; return }
            let marker = bytes[markerAt]
            let start = markerAt - 1
            if marker == 0xDA { end = .scan(at: start); return }
            if marker == 0xD9 { end = .damaged("EOI before any image data"); return }
            if (0xD0...0xD7).contains(marker) || marker == 0x01 {
                position = markerAt + 1
                continue
            }
            guard markerAt + 2 < last else { end = .truncated; return }
            let length = Int(bytes[markerAt + 1]) << 8 | Int(bytes[markerAt + 2])
            let segmentEnd = markerAt + 1 + length
            guard length >= 2 else {
                end = .damaged("segment 0x\(String(marker, radix: 16)) at byte \(start - bytes.startIndex) has an impossible length (\(length))")
                return
            }
            guard segmentEnd <= last else {
                end = .damaged("segment 0x\(String(marker, radix: 16)) at byte \(start - bytes.startIndex) runs past the end of the file")
                return
            }
            segments.append(Segment(marker: marker, range: start..<segmentEnd, payload: (markerAt + 3)..<segmentEnd))
            position = segmentEnd
        }
    }

    /// Whether `segment`'s payload in `bytes` starts with `prefix`.
    public static func starts<Bytes: RandomAccessCollection>(_ segment: Segment, in bytes: Bytes, with prefix: [UInt8]) -> Bool
    where Bytes.Element == UInt8, Bytes.Index == Int {
        segment.payload.count >= prefix.count && bytes[segment.payload.lowerBound..<(segment.payload.lowerBound + prefix.count)].elementsEqual(prefix)
    }

    /// The first APP segment of `marker` whose payload starts with `header` (the XMP APP1).
    public func first<Bytes: RandomAccessCollection>(_ marker: UInt8, startingWith header: [UInt8], in bytes: Bytes) -> Segment?
    where Bytes.Element == UInt8, Bytes.Index == Int {
        segments.first { $0.marker == marker && Self.starts($0, in: bytes, with: header) }
    }

    /// Width and height from the first frame header (SOFn), if there is one.
    public func dimensions<Bytes: RandomAccessCollection>(in bytes: Bytes) -> (width: Int, height: Int)?
    where Bytes.Element == UInt8, Bytes.Index == Int {
        guard let frame = segments.first(where: { (0xC0...0xCF).contains($0.marker) && ![0xC4, 0xC8, 0xCC].contains($0.marker) && $0.payload.count >= 5 }) else {
            return nil
        }
        let at = frame.payload.lowerBound
        return (Int(bytes[at + 3]) << 8 | Int(bytes[at + 4]), Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]))
    }
}
