import Foundation
import ShutterPipeImaging
import ShutterPipeSupport
import Testing

/// The one walk of a JPEG's header: what it finds, where it stops, and that bytes from
/// anywhere never take it outside them.
@Suite("JPEGSegments: a JPEG's header walked from SOI to SOS", .timeLimit(.minutes(1)))
struct JPEGSegmentsTests {
    static func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [0xFF, marker, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
    }

    /// SOI, JFIF, fill bytes, Exif, XMP, an RST marker (no length), SOF0 of 640×480, SOS, data, EOI.
    static let jpeg: [UInt8] = [0xFF, 0xD8]
        + segment(0xE0, Array("JFIF".utf8) + [0, 1, 1, 0, 0, 72, 0, 72, 0, 0])
        + [0xFF, 0xFF] + segment(0xE1, JPEGSegments.exifHeader + [0x49, 0x49, 42, 0, 8, 0, 0, 0])
        + segment(0xE1, JPEGSegments.xmpHeader + Array("<x:xmpmeta/>".utf8))
        + [0xFF, 0xD0]
        + segment(0xC0, [8, 0x01, 0xE0, 0x02, 0x80, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1])
        + segment(0xDA, [1, 1, 0, 0, 63, 0]) + [0x12, 0x34, 0xFF, 0xD9]

    @Test("a whole header: every segment in order with its payload, fill bytes and RST skipped, the scan found, the frame's size read, the XMP found by its header")
    func whole() {
        let walk = JPEGSegments(Self.jpeg)
        #expect(walk.segments.map(\.marker) == [0xE0, 0xE1, 0xE1, 0xC0])
        #expect(walk.scanStart == Self.jpeg.count - 2 - 4 - 8)
        #expect(walk.dimensions(in: Self.jpeg)?.width == 640 && walk.dimensions(in: Self.jpeg)?.height == 480)
        let xmp = walk.first(0xE1, startingWith: JPEGSegments.xmpHeader, in: Self.jpeg)
        #expect(xmp.map { String(decoding: Self.jpeg[($0.payload.lowerBound + JPEGSegments.xmpHeader.count)..<$0.range.upperBound], as: UTF8.self) } == "<x:xmpmeta/>")
        for segment in walk.segments {
            #expect(Self.jpeg[segment.range.lowerBound] == 0xFF && Self.jpeg[segment.range.lowerBound + 1] == segment.marker)
            #expect(segment.payload.upperBound == segment.range.upperBound && segment.payload.lowerBound == segment.range.lowerBound + 4)
        }
        // A slice keeps its own indices: offsets are the slice's.
        let padded = [UInt8](repeating: 7, count: 10) + Self.jpeg
        let sliced = JPEGSegments(padded[10...])
        #expect(sliced.segments.map(\.range.lowerBound) == walk.segments.map { $0.range.lowerBound + 10 })
    }

    @Test("where it stops: a front cut between segments is truncated with what was read; a length past the end, EOI first, a stray byte or no SOI is damage, said with its place")
    func stops() {
        let front = Array(Self.jpeg.prefix(2 + 18))  // SOI and the JFIF segment
        let cut = JPEGSegments(front)
        #expect(cut.end == .truncated && cut.segments.map(\.marker) == [0xE0] && cut.scanStart == nil)
        let past = JPEGSegments(Array(Self.jpeg.prefix(2 + 18 + 2 + 6)))
        #expect(past.end == .damaged("segment 0xe1 at byte 22 runs past the end of the file") && past.segments.count == 1, "\(past.end)")
        #expect(JPEGSegments([0xFF, 0xD8, 0xFF, 0xD9]).end == .damaged("EOI before any image data"))
        #expect(JPEGSegments([0xFF, 0xD8, 0x00, 0x01]).end == .damaged("expected a marker at byte 2, found 0x0"))
        #expect(JPEGSegments([0x89, 0x50, 0x4E, 0x47]).end == .damaged("not a JPEG (no SOI marker)"))
        #expect(JPEGSegments([0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x01]).end == .damaged("segment 0xe1 at byte 2 has an impossible length (1)"))
    }

    @Test("bytes from anywhere: every cut and thousands of damaged copies walk without reading outside them, each segment inside the bytes")
    func hostile() {
        var generator = SystemRandomNumberGenerator()
        var copies: [[UInt8]] = (0...Self.jpeg.count).map { Array(Self.jpeg.prefix($0)) }
        for _ in 0..<3000 {
            var copy = Self.jpeg
            for _ in 0..<Int.random(in: 1...4, using: &generator) { copy[Int.random(in: 0..<copy.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            copies.append(copy)
        }
        for copy in copies {
            let walk = JPEGSegments(copy)
            #expect(walk.segments.allSatisfy { $0.range.lowerBound >= 0 && $0.range.upperBound <= copy.count && $0.payload.count >= 0 })
            _ = walk.dimensions(in: copy)
            if let scan = walk.scanStart { #expect(scan < copy.count) }
        }
    }
}
