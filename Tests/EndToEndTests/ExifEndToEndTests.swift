import Foundation
import TestSupport
import Testing

@Suite("EXIF end to end", .timeLimit(.minutes(2)))
struct ExifEndToEndTests {
    @Test("shutterpipe run tags replayed camera files, keeps RAW byte-identical with a sidecar, and stores a damaged JPEG with a warning")
    func replayedFolder() async throws {
        let folder = TemporaryDirectory("exif-e2e")
        let source = folder.file("camera")
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        // Three exposures: a JPEG with camera EXIF, a RAW+JPEG pair, a JPEG cut off in its header.
        let stub = "\(repositoryRoot)/Plugins/FileStub/Tests/Fixtures"
        try copyTestFile("\(stub)/IMG_0001.JPG", to: "\(source)/IMG_0001.JPG")
        try await ExifTool.run(["-q", "-overwrite_original", "-Make=TestCam", "-Model=E2E", "-ISO=400", "\(source)/IMG_0001.JPG"])
        try copyTestFile("\(stub)/IMG_0002.CR2", to: "\(source)/IMG_0002.CR2")
        try copyTestFile("\(stub)/IMG_0002.JPG", to: "\(source)/IMG_0002.JPG")
        let whole = try Data(contentsOf: URL(fileURLWithPath: "\(stub)/IMG_0001.JPG"))
        try whole.prefix(60).writeTestFile("\(source)/IMG_0003.JPG")
        let config = try writeConfig("""
        version: 1
        session: e2e
        backend:
          type: file-stub
          directory: \(source)
        triggers:
          - type: stdin
        sinks:
          - type: files
            directory: \(folder.file("out"))
            exif:
              Artist: Jürgen Müller
              Copyright: "© {date} Studio"
              ImageDescription: "{session} #{seq}"
        """, in: folder)
        let outcome = try await shutterpipe(["run", "--config", config], input: "capture\ncapture\ncapture\n", in: folder.path)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let out = folder.file("out")
        #expect(outcome.lines == [
            "photoSuccess \(out)/e2e-0001.jpg",
            "photoSuccess \(out)/e2e-0002.cr2 \(out)/e2e-0002.cr2.xmp \(out)/e2e-0002.jpg",
            "photoSuccess \(out)/e2e-0003.jpg \(out)/e2e-0003.jpg.xmp (warning: camera JPEG IMG_0003.JPG is damaged (segment 0xdb at byte 52 runs past the end of the file); stored as received, metadata in a sidecar)",
            "exitedOrUnableToEnter",
        ])
        let tags = try await ExifTool.tags(["\(out)/e2e-0001.jpg", "\(out)/e2e-0002.jpg", "\(out)/e2e-0002.cr2.xmp"])
        #expect(tags["\(out)/e2e-0001.jpg"]?["IFD0:Artist"] == "Jürgen Müller")
        #expect(tags["\(out)/e2e-0001.jpg"]?["IFD0:Model"] == "E2E")
        #expect(tags["\(out)/e2e-0001.jpg"]?["IFD0:ImageDescription"] == "e2e #1")
        #expect(tags["\(out)/e2e-0002.jpg"]?["XMP-dc:Creator"] == "Jürgen Müller")
        #expect(tags["\(out)/e2e-0002.cr2.xmp"]?["XMP-dc:Creator"] == "Jürgen Müller")
        #expect(try Data(contentsOf: URL(fileURLWithPath: "\(out)/e2e-0002.cr2")) == (try Data(contentsOf: URL(fileURLWithPath: "\(source)/IMG_0002.CR2"))))
        #expect(try Data(contentsOf: URL(fileURLWithPath: "\(out)/e2e-0003.jpg")) == whole.prefix(60))
    }
}
