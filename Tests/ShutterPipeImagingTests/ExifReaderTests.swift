import Foundation
import ShutterPipeFixtures
import ShutterPipeImaging
import ShutterPipeKit
import TestSupport
import Testing

/// The EXIF summary read from a JPEG's first bytes in memory, as the files sink hands it
/// to the catalogue (``StoredFile/exif``), against the same read from the file.
@Suite("ExifReader: a JPEG's summary from its header in memory", .timeLimit(.minutes(1)))
struct ExifReaderTests {
    @Test("the header in memory gives the summary the file gives (from a slice too, and from the header alone); a header cut inside its Exif segment, or a JPEG without one, gives none")
    func fromTheHeader() async throws {
        let folder = TemporaryDirectory("exif-header")
        let path = folder.file("IMG_0002.JPG")
        try copyTestFile("\(repositoryRoot)/Plugins/FileStub/Tests/Fixtures/IMG_0002.JPG", to: path)
        _ = try await ExifTool.run(["-q", "-overwrite_original", "-Make=Nikon", "-Model=NIKON D750", "-ISO=800", "-ExposureTime=1/250",
                                    "-FNumber=8", "-LensModel=50mm f/1.8", "-DateTimeOriginal=2026:12:06 10:11:12", "-SerialNumber=3012345", path])
        let whole = try Data(contentsOf: URL(fileURLWithPath: path))
        let fromFile = ExifReader.summary(of: path)
        #expect(fromFile.model == "NIKON D750" && fromFile.iso == 800 && fromFile.exposureTime == "1/250" && fromFile.serial == "3012345", "\(fromFile)")
        #expect(ExifReader.summary(ofJPEGHeader: whole) == fromFile)
        let padded = Data(repeating: 0, count: 7) + whole
        #expect(ExifReader.summary(ofJPEGHeader: padded.dropFirst(7)) == fromFile, "a slice whose indices do not start at 0")
        let walk = JPEGSegments(whole)
        let exif = try #require(walk.first(0xE1, startingWith: JPEGSegments.exifHeader, in: whole))
        #expect(ExifReader.summary(ofJPEGHeader: whole.prefix(exif.range.upperBound)) == fromFile, "the header up to the end of its Exif segment is enough")
        #expect(ExifReader.summary(ofJPEGHeader: whole.prefix(exif.range.upperBound - 1)) == nil, "a segment cut short is not read")
        #expect(ExifReader.summary(ofJPEGHeader: SyntheticJPEG.make(width: 16, height: 16, shot: 1)) == nil, "no Exif segment")
    }
}
