#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import ShutterPipeCatalogue
import ShutterPipeKit
import TestSupport
import Testing

/// One capture of a file-stub session replaying the photos in `card`; the shot the
/// catalogue lists for it, and its one file.
func oneShot(from card: String, in folder: TemporaryDirectory) async throws -> (CatalogueShot, CatalogueFile) {
    let config = try writeConfig(cataloguePipeline(folder.file("photos"), backend: "  directory: \(card)"), in: folder)
    let outcome = try await shutterpipe(["run", "--config", config], input: "capture\n", in: folder.path)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let shots = try await listedShots(["--config", config], in: folder)
    try #require(shots.count == 1 && shots[0].files.count == 1, "\(shots)")
    return (shots[0], shots[0].files[0])
}

@Suite("catalogue: RAW-only and HEIF shots", .timeLimit(.minutes(2)))
struct FormatCatalogueTests {
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
        let (shot, file) = try await oneShot(from: card, in: folder)
        #expect(file.kind == .heif, "\(file)")
        let read = ungrouped(try await ExifTool.tags([file.path], extra: ["-n"])[file.path] ?? [:])
        let exif = shot.exif
        #expect(exif.exposureTime == "1/160" && read["ExposureTime"] == "0.00625", "\(exif) \(read)")
        #expect(exif.aperture == Double(read["FNumber"] ?? "") && exif.iso == Int(read["ISO"] ?? "") && exif.focalLength == Double(read["FocalLength"] ?? ""), "\(exif)")
        #expect(exif.lens == read["LensModel"] && exif.serial == read["SerialNumber"], "\(exif)")
        #expect(exif.captureTime == read["DateTimeOriginal"] && exif.model == "Canon EOS R5", "\(exif)")
    }

    @Test("a RAW-only shoot: the shot is one RAW file, and its EXIF summary (read with LibRaw) matches exiftool's reading")
    func rawOnly() async throws {
        let folder = TemporaryDirectory("catalogue-raw")
        let card = folder.file("card")
        try FileManager.default.createDirectory(atPath: card, withIntermediateDirectories: true)
        let dng = "\(card)/IMG_0042.DNG"
        let made = try await runProgram(["python3", "\(repositoryRoot)/Tests/RawSamples/make_dng.py", dng, "--width", "400", "--height", "300"])
        try #require(made.status == 0, "\(made.errors)")
        _ = try await ExifTool.run(["-q", "-overwrite_original", "-ExposureTime=1/250", "-FNumber=4", "-ISO=800", "-FocalLength=50",
                                    "-LensModel=RF50mm F1.8 STM", "-SerialNumber=B0042", "-DateTimeOriginal=2026:12:03 11:12:13", dng])
        let (shot, file) = try await oneShot(from: card, in: folder)
        #expect(file.kind == .raw, "\(file)")
        let read = ungrouped(try await ExifTool.tags([file.path], extra: ["-n"])[file.path] ?? [:])
        let exif = shot.exif
        #expect(exif.exposureTime == "1/250" && read["ExposureTime"] == "0.004", "\(exif)")
        #expect(exif.aperture == Double(read["FNumber"] ?? "") && exif.iso == Int(read["ISO"] ?? "") && exif.focalLength == Double(read["FocalLength"] ?? ""), "\(exif)")
        #expect(exif.lens == read["LensModel"] && exif.serial == read["SerialNumber"], "\(exif)")
        #expect(exif.captureTime == read["DateTimeOriginal"] && exif.model == "shutterpipe Test DNG", "\(exif)")
    }
}
