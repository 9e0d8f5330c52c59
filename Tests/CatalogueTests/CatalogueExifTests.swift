import Foundation
import ShutterPipeKit
import TestSupport
import Testing

@Suite("catalogue: the EXIF summary of a shot", .timeLimit(.minutes(3)))
struct CatalogueExifTests {
    @Test("RAW+JPEG is one shot with two files; the EXIF summary is read from the JPEG, and matches exiftool's reading")
    func rawPlusJPEG() async throws {
        let folder = TemporaryDirectory("catalogue-pairs")
        let source = folder.file("card")
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        try Data("II*\u{0}fake raw sensor data".utf8).writeTestFile("\(source)/IMG_0002.CR2")
        try copyTestFile("\(repositoryRoot)/Plugins/FileStub/Tests/Fixtures/IMG_0002.JPG", to: "\(source)/IMG_0002.JPG")
        _ = try await ExifTool.run(["-q", "-overwrite_original", "-ExposureTime=1/125", "-FNumber=5.6", "-ISO=400", "-FocalLength=85",
                                    "-LensModel=EF85mm f/1.4L", "-Make=Canon", "-Model=Canon EOS R5", "-SerialNumber=A0123",
                                    "-Orientation#=6", "-DateTimeOriginal=2026:12:03 10:11:12", "\(source)/IMG_0002.JPG"])
        let config = try writeConfig(cataloguePipeline(folder.file("photos"), backend: "  directory: \(source)\n  pairByStem: true"), in: folder)
        let outcome = try await shutterpipe(["run", "--config", config], input: "capture\n", in: folder.path)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let shots = try await listedShots(["--config", config], in: folder)
        try #require(shots.count == 1)
        #expect(shots[0].files.map(\.kind).sorted(by: { $0.rawValue < $1.rawValue }) == [.jpeg, .raw])
        let jpeg = try #require(shots[0].files.first { $0.kind == .jpeg })
        let read = ungrouped(try await ExifTool.tags([jpeg.path], extra: ["-n"])[jpeg.path] ?? [:])
        let exif = shots[0].exif
        #expect(exif.exposureTime == "1/125" && read["ExposureTime"] == "0.008")
        #expect(exif.aperture == Double(read["FNumber"] ?? "") && exif.iso == Int(read["ISO"] ?? ""))
        #expect(exif.focalLength == Double(read["FocalLength"] ?? "") && exif.lens == read["LensModel"])
        #expect(exif.orientation == Int(read["Orientation"] ?? "") && exif.orientation == 6)
        #expect(exif.model == read["Model"] && exif.serial == read["SerialNumber"])
        #expect(exif.captureTime == read["DateTimeOriginal"])
    }

    @Test("the EXIF summary is the one the files sink read from the bytes it wrote, carried with the answer: a hook that rewrites the stored JPEG's model before the catalogue records the shot does not change it (the file is not read back)")
    func exifFromTheBytesWritten() async throws {
        let folder = TemporaryDirectory("catalogue-exif-bytes")
        let source = folder.file("card")
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        try copyTestFile("\(repositoryRoot)/Plugins/FileStub/Tests/Fixtures/IMG_0002.JPG", to: "\(source)/IMG_0002.JPG")
        _ = try await ExifTool.run(["-q", "-overwrite_original", "-Make=Nikon", "-Model=NIKON D750", "-ISO=800", "\(source)/IMG_0002.JPG"])
        let hook = "  - {type: command, command: [/bin/sh, -c, 'exiftool -q -overwrite_original -Model=Rewritten \"$ARGUMENT\"'], actions: [download], failPhoto: true}"
        let config = try writeConfig(cataloguePipeline(folder.file("photos"), backend: "  directory: \(source)", sink: "    exif:\n      Artist: Ann Example\n\(hook)"), in: folder)
        let outcome = try await shutterpipe(["run", "--config", config], input: "capture\n", in: folder.path)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let shots = try await listedShots(["--config", config], in: folder)
        try #require(shots.count == 1 && shots[0].files.count == 1)
        let stored = shots[0].files[0].path
        #expect(ungrouped(try await ExifTool.tags([stored])[stored] ?? [:])["Model"] == "Rewritten", "the hook ran before the catalogue recorded the shot")
        #expect(shots[0].exif.model == "NIKON D750" && shots[0].exif.iso == 800, "read from the bytes the sink wrote: \(shots[0].exif)")
    }
}
