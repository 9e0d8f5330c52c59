import Foundation
import ShutterPipeSupport

/// The header segments of a JPEG (``JPEGSegments``, the one walk of a JPEG's markers), and
/// a new header spliced from them.
///
/// Only the structure is read; no byte is changed. Everything from SOS to the end of the
/// file (scan data, EOI, and whatever follows it, such as MPF secondary images) is one
/// opaque tail that a splice copies verbatim.
public struct JPEGLayout {
    public typealias Segment = JPEGSegments.Segment

    /// Why a file's header cannot be read.
    public struct Damage: Error, CustomStringConvertible {
        public var description: String
    }

    public static let exifHeader = JPEGSegments.exifHeader
    public static let xmpHeader = JPEGSegments.xmpHeader
    public static let mpfHeader = JPEGSegments.mpfHeader

    public let data: Data
    /// Segments between SOI and SOS, in order.
    public let segments: [Segment]
    /// Where the SOS marker starts.
    public let scanStart: Int
    /// Width and height from the frame header, if there is one.
    public let dimensions: (width: Int, height: Int)?

    /// Whether `data` starts like a JPEG (SOI then a marker).
    public static func looksLikeJPEG(_ data: Data) -> Bool { JPEGSegments.looksLikeJPEG(data) }

    /// Walks the markers; throws ``Damage`` for a truncated or malformed header.
    public init(_ data: Data) throws(Damage) {
        let data = data.startIndex == 0 ? data : Data(data)  // ranges below are offsets from 0
        self.data = data
        guard Self.looksLikeJPEG(data) else { throw Damage(description: "not a JPEG (no SOI marker)") }
        let walk = JPEGSegments(data)  // the header only; no copy of the image data
        switch walk.end {
        case .scan(let at): scanStart = at
        case .truncated: throw Damage(description: "the header ends before the image data (no SOS marker)")
        case .damaged(let why): throw Damage(description: why)
        }
        segments = walk.segments
        dimensions = walk.dimensions(in: data)
    }

    public func payload(of segment: Segment) -> Data { data.subdata(in: segment.payload) }

    public func starts(_ segment: Segment, with prefix: [UInt8]) -> Bool { JPEGSegments.starts(segment, in: data, with: prefix) }

    /// The Exif APP1 segments, first one first.
    public var exifSegments: [Segment] { segments.filter { $0.marker == 0xE1 && starts($0, with: Self.exifHeader) } }
    /// Whether a (standard) XMP APP1 exists.
    public var hasXMP: Bool { segments.contains { $0.marker == 0xE1 && starts($0, with: Self.xmpHeader) } }
    /// The MPF APP2 segment, if any.
    public var mpfSegment: Segment? { segments.first { $0.marker == 0xE2 && starts($0, with: Self.mpfHeader) } }

    /// The resolution of a JFIF APP0 (x, y, unit: 1 inch, 2 cm), if present and set.
    public var jfifResolution: (x: Int, y: Int, unit: Int)? {
        guard let app0 = segments.first(where: { $0.marker == 0xE0 && starts($0, with: Array("JFIF".utf8) + [0]) }),
              app0.payload.count >= 12 else { return nil }
        let p = app0.payload.lowerBound
        let unit = Int(data[p + 7]), x = Int(data[p + 8]) << 8 | Int(data[p + 9]), y = Int(data[p + 10]) << 8 | Int(data[p + 11])
        guard unit == 1 || unit == 2, x > 0, y > 0 else { return nil }
        return (x, y, unit)
    }

    /// A new file with our segments spliced in; everything else byte-identical.
    ///
    /// - `exif`: a new Exif APP1 body. It takes the place of the first Exif APP1, and any
    ///   further Exif APP1s are dropped; with none, it goes after the APP0 segments.
    /// - `xmp`: an XMP APP1 body, placed right after the (new or untouched) Exif APP1, or
    ///   after the APP0 segments.
    /// - `replacements`: new bytes for a segment, by index (the MPF size fix-up).
    /// - The tail from SOS to the end of the file is kept verbatim, and not copied: the
    ///   result refers to the original's bytes.
    /// - A body that does not fit a segment (``maximumSegmentBody``) is refused: the
    ///   caller stores the photo without it and says so.
    public func spliced(exif: Data?, xmp: Data? = nil, replacements: [Int: Data] = [:]) throws(SegmentTooLarge) -> SplicedJPEG {
        if let exif, exif.count > Self.maximumExifBody { throw SegmentTooLarge(what: "EXIF", bytes: exif.count, limit: Self.maximumExifBody) }
        if let xmp, xmp.count > Self.maximumXMPBody { throw SegmentTooLarge(what: "XMP", bytes: xmp.count, limit: Self.maximumXMPBody) }
        var out = Data()
        out.reserveCapacity(scanStart + (exif?.count ?? 0) + (xmp?.count ?? 0) + 16)
        out.append(contentsOf: [0xFF, 0xD8])
        let cameraExif = exifSegments.first?.range.lowerBound
        var inserted = false
        func insertOurs() {
            guard !inserted else { return }
            inserted = true
            if let exif { out.append(Self.segment(0xE1, Self.exifHeader, exif)) }
            if let xmp { out.append(Self.segment(0xE1, Self.xmpHeader, xmp)) }
        }
        for (index, segment) in segments.enumerated() {
            if cameraExif == nil && segment.marker != 0xE0 { insertOurs() }
            let isExif = segment.marker == 0xE1 && starts(segment, with: Self.exifHeader)
            if isExif && exif != nil {
                if segment.range.lowerBound == cameraExif { insertOurs() }
                continue
            }
            out.append(replacements[index] ?? data[segment.range])
            if isExif && segment.range.lowerBound == cameraExif { insertOurs() }
        }
        insertOurs()
        return SplicedJPEG(head: out, tail: data[scanStart...])
    }

    /// `FF marker length header body`; the callers keep bodies under
    /// ``maximumSegmentBody`` (a length over 65535 cannot be written, and is cut to it
    /// rather than trap).
    public static func segment(_ marker: UInt8, _ header: [UInt8], _ body: Data) -> Data {
        let length = min(0xFFFF, 2 + header.count + body.count)
        var out = Data([0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)])
        out.append(contentsOf: header)
        out.append(body)
        return out
    }

    /// The largest payload a segment can carry: its length field counts itself.
    public static let maximumSegmentBody = 65_533
    /// The largest payload an APP1 can carry after its identifier.
    public static let maximumExifBody = maximumSegmentBody - exifHeader.count
    public static let maximumXMPBody = maximumSegmentBody - xmpHeader.count
}

/// A metadata block too large for a JPEG segment (64 KiB): the photo is stored without it.
public struct SegmentTooLarge: Error, CustomStringConvertible {
    public var what: String
    public var bytes: Int
    public var limit: Int
    public var description: String { "the \(what) block would be \(bytes) bytes, over the \(limit) a JPEG segment holds" }
}

/// A JPEG as a new header and the original's untouched tail (SOS to the end), written one
/// after the other so that a 10 MB photo is never copied just to change its header.
public struct SplicedJPEG {
    public var head: Data
    public var tail: Data

    public var count: Int { head.count + tail.count }
    public var chunks: [Data] { [head, tail] }

    /// The whole file in one buffer (for tests and read-back).
    public var joined: Data { head + tail }
}

extension SplicedJPEG {
    /// After bytes were inserted, updates the MPF index: the primary image's size grows by
    /// the inserted amount, and secondary images' offsets (relative to the MPF header)
    /// grow too when the insertion came after that header. Made for one place of change,
    /// as ``JPEGLayout/spliced(exif:xmp:replacements:)`` makes it.
    public func fixingMPF(original: JPEGLayout) -> SplicedJPEG {
        let spliced = self
        guard let oldMPF = original.mpfSegment else { return spliced }
        let delta = spliced.count - original.data.count
        // The MPF segment is in the header; parse the new header alone (with its SOS marker).
        guard delta != 0, let newLayout = try? JPEGLayout(spliced.head + [0xFF, 0xDA]), let mpf = newLayout.mpfSegment else { return spliced }
        let out = spliced.head
        // Where the new header first differs from the old one: where bytes came in (a new
        // EXIF, an XMP after it, or a marked XMP replaced where it was).
        let insertionPoint = zip(spliced.head.indices, original.data.indices.prefix(original.scanStart))
            .first { spliced.head[$0.0] != original.data[$0.1] }?.0 ?? min(spliced.head.count, original.scanStart)
        // The images moved away from the MPF header only when the change came after that
        // whole segment: a change before it (its first differing byte may be inside it, past
        // a marker byte both share) moves the header with the images.
        let imagesMovedAwayFromHeader = oldMPF.range.upperBound <= insertionPoint
        let tiffStart = mpf.payload.lowerBound + JPEGLayout.mpfHeader.count
        guard let index = try? TIFFEditor(out.subdata(in: tiffStart..<mpf.payload.upperBound)),
              let entry = index.ifd0.entries.first(where: { $0.tag == 0xB002 && $0.type == 7 }) else { return spliced }
        var patched = out
        let table = tiffStart + Int(index.u32(field: entry.field))
        for image in 0..<(Int(entry.count) / 16) {
            let at = table + 16 * image
            guard at + 12 <= mpf.payload.upperBound else { break }
            let size = index.u32(in: patched, at: at + 4), offset = index.u32(in: patched, at: at + 8)
            if offset == 0 {
                patched.replaceSubrange((at + 4)..<(at + 8), with: index.encode32(UInt32(Int(size) + delta)))
            } else if imagesMovedAwayFromHeader {
                patched.replaceSubrange((at + 8)..<(at + 12), with: index.encode32(UInt32(Int(offset) + delta)))
            }
        }
        return SplicedJPEG(head: patched, tail: spliced.tail)
    }
}
