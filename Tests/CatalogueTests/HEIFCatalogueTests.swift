#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import ShutterPipeCatalogue
import ShutterPipeKit
import TestSupport
import Testing

@Suite("catalogue: HEIF shots", .timeLimit(.minutes(2)))
struct HEIFCatalogueTests {
    @Test("a HEIF shot: one HEIF file, and its EXIF summary (the Exif block through libheif, then libexif) matches exiftool's reading")
    func heifSummary() async throws {
        let folder = TemporaryDirectory("catalogue-heif")
        let card = folder.file("card")
        try FileManager.default.createDirectory(atPath: card, withIntermediateDirectories: true)
        let heic = "\(card)/IMG_0007.HEIC"
        let encoded = try await runProgram(["heif-enc", "-q", "80", "-o", heic, "\(repositoryRoot)/Plugins/FileStub/Tests/Fixtures/IMG_0001.JPG"])
        try #require(encoded.status == 0, "heif-enc: \(encoded.errors)")
        let written = try await runProgram(["exiftool", "-q", "-overwrite_original", "-Make=Canon", "-Model=Canon EOS R5", "-ExposureTime=1/160", "-FNumber=2.8",
                                              "-ISO=200", "-FocalLength=85", "-LensModel=RF85mm F1.2 L USM", "-SerialNumber=R5-0007",
                                              "-DateTimeOriginal=2026:12:03 09:08:07", heic])
        try #require(written.status == 0, "exiftool could not write the HEIC's EXIF: \(written.errors)")
        let config = try writeConfig(cataloguePipeline(folder.file("photos"), backend: "  directory: \(card)"), in: folder)
        let outcome = try await shutterpipe(["run", "--config", config], input: "capture\n", in: folder.path)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let shots = try await listedShots(["--config", config], in: folder)
        try #require(shots.count == 1)
        let file = try #require(shots[0].files.first)
        #expect(shots[0].files.count == 1 && file.kind == .heif, "\(shots[0].files)")
        let read = ungrouped(try await ExifTool.tags([file.path], extra: ["-n"])[file.path] ?? [:])
        let exif = shots[0].exif
        #expect(exif.exposureTime == "1/160" && read["ExposureTime"] == "0.00625", "\(exif) \(read)")
        #expect(exif.aperture == Double(read["FNumber"] ?? "") && exif.iso == Int(read["ISO"] ?? "") && exif.focalLength == Double(read["FocalLength"] ?? ""), "\(exif)")
        #expect(exif.lens == read["LensModel"] && exif.serial == read["SerialNumber"], "\(exif)")
        #expect(exif.captureTime == read["DateTimeOriginal"] && exif.model == "Canon EOS R5", "\(exif)")
    }
}
