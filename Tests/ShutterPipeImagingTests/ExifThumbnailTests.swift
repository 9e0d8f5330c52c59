import Foundation
import ShutterPipeImaging
import ShutterPipeSupport
import TestSupport
import Testing

@Suite("ExifThumbnail: the picture at a file's front", .timeLimit(.minutes(2)))
struct ExifThumbnailTests {
    @Test("fed a camera JPEG a kilobyte at a time, it asks for more until the thumbnail is in, then gives exiftool's ThumbnailImage byte for byte")
    func growingPrefix() async throws {
        let folder = TemporaryDirectory("exif-thumbnail")
        let photo = folder.file("photo.jpg")
        _ = try await runProgram(["/usr/bin/python3", "\(repositoryRoot)/Tests/Browser/pixels.py", "thumbnailed", photo, "640", "480"])
        let expected = try await runProgram(["exiftool", "-b", "-ThumbnailImage", photo]).data
        #expect(expected.count > 100 && expected.prefix(2) == Data([0xFF, 0xD8]))
        let file = try Data(contentsOf: URL(fileURLWithPath: photo))
        var found: Data?
        var asked = 0
        for length in stride(from: 0, through: file.count, by: 1024) {
            let prefix = file.prefix(length)
            switch prefix.withUnsafeBytes({ ExifThumbnail.find(in: $0) }) {
            case .needs(let more):
                #expect(more > length, "asks for more than it has")
                asked += 1
                continue
            case .at(let range):
                found = prefix.subdata(in: range)
            case .none:
                Issue.record("no thumbnail found in the first \(length) bytes")
            }
            break
        }
        #expect(asked > 0)
        #expect(found == expected)
        #expect(ExifThumbnail.thumbnail(of: file) == expected)
    }

    @Test("a TIFF-based RAW's thumbnail (IFD0's JPEGInterchangeFormat), big- and little-endian")
    func tiffRaw() {
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xDB, 1, 2, 3, 4, 0xFF, 0xD9]
        for little in [true, false] {
            var bytes: [UInt8] = little ? [0x49, 0x49, 42, 0] : [0x4D, 0x4D, 0, 42]
            func put(_ value: Int, _ width: Int) {
                for index in 0..<width { bytes.append(UInt8(truncatingIfNeeded: little ? value >> (8 * index) : value >> (8 * (width - 1 - index)))) }
            }
            put(8, 4)  // IFD0 at 8
            put(2, 2)  // two entries
            let data = 8 + 2 + 2 * 12 + 4
            put(0x0201, 2); put(4, 2); put(1, 4); put(data, 4)
            put(0x0202, 2); put(4, 2); put(1, 4); put(jpeg.count, 4)
            put(0, 4)  // no IFD1
            bytes += jpeg
            let found = ExifThumbnail.thumbnail(of: Data(bytes))
            #expect(found == Data(jpeg), "little-endian: \(little)")
        }
    }

    @Test("hostile fronts: offsets past the segment or the scan, a loop of IFDs, lengths over the limit, not a JPEG; a thousand random corruptions never give a range outside the bytes or one that is not a JPEG")
    func hostile() async throws {
        // An APP1 whose IFD1 points past its own segment: none, not "more" for ever.
        var app1: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1, 0, 0x2A] + Array("Exif".utf8) + [0, 0]
        app1 += [0x49, 0x49, 42, 0, 8, 0, 0, 0]  // TIFF, IFD0 at 8
        app1 += [0, 0, 20, 0, 0, 0]              // IFD0: no entries, IFD1 at 20
        app1 += [2, 0, 0x01, 0x02, 4, 0, 1, 0, 0, 0, 0x00, 0x10, 0, 0, 0x02, 0x02, 4, 0, 1, 0, 0, 0, 10, 0, 0, 0]
        app1 += Array(repeating: 0, count: 4)
        let outside = app1.withUnsafeBytes { ExifThumbnail.find(in: $0) }
        if case .needs(let more) = outside { Issue.record("asks for \(more) bytes past a segment it has whole") }
        // IFD0 pointing at itself.
        let loop: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0, 0, 0, 8, 0, 0, 0]
        #expect(loop.withUnsafeBytes { ExifThumbnail.find(in: $0) } == .none)
        // Not a JPEG or a TIFF.
        #expect(Array("GIF89a....".utf8).withUnsafeBytes { ExifThumbnail.find(in: $0) } == .none)

        let folder = TemporaryDirectory("exif-thumbnail-fuzz")
        let photo = folder.file("photo.jpg")
        _ = try await runProgram(["/usr/bin/python3", "\(repositoryRoot)/Tests/Browser/pixels.py", "thumbnailed", photo, "320", "240"])
        let front = Array(try Data(contentsOf: URL(fileURLWithPath: photo)).prefix(4096))
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<1000 {
            var bytes = front
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                bytes[Int.random(in: 0..<min(400, bytes.count), using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
            switch bytes.withUnsafeBytes({ ExifThumbnail.find(in: $0) }) {
            case .at(let range):
                #expect(range.lowerBound >= 0 && range.upperBound <= bytes.count && bytes[range.lowerBound] == 0xFF && bytes[range.lowerBound + 1] == 0xD8)
            case .needs(let more):
                #expect(more > bytes.count && more <= ExifThumbnail.scanned)
            case .none:
                break
            }
        }
    }
}
