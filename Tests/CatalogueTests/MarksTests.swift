#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import ShutterPipeCatalogue
import ShutterPipeFixtures
import ShutterPipeKit
import TestSupport
import Testing

@Suite("catalogue: ratings, labels, picks and keywords in sidecars and JPEGs", .timeLimit(.minutes(3)))
struct MarksTests {
    @Test("a rating, a label and a reject made while the session shoots land in the sidecar, merged with the files sink's metadata; exiftool reads them; the reject keeps the stars editors show")
    func ratingsInSidecars() async throws {
        let folder = TemporaryDirectory("catalogue-ratings")
        // Marks reach the running session through its socket (it holds the catalogue).
        let config = try writeConfig(cataloguePipeline(folder.file("photos"), sink: "    sidecars: always\n    exif:\n      Artist: Ann Example")
            .replacingOccurrences(of: "  - type: stdin\n", with: "  - type: stdin\n  - type: socket\n    path: \(folder.file("s.sock"))\n"), in: folder)
        let session = try await RunningProcess.start(program: try shutterpipeBinary(), ["run", "--config", config, "--verbose"], in: folder.path)
        session.send("capture\n")
        await session.waitForOutput("photoSuccess", on: .stdout)
        // The record follows the answer on the catalogue's thread; wait for it.
        #expect(await eventually { ((try? await listedShots(["--config", config], in: folder)) ?? []).count == 1 })
        let shots = try await listedShots(["--config", config], in: folder)
        let id = try #require(shots.first?.id)
        let photo = try #require(shots.first?.files.first?.path)
        for (arguments, rating, label) in [(["rate", "\(id)", "4"], "4", nil), (["label", "\(id)", "red"], "4", "Red"), (["reject", "\(id)"], "4", "Red")] {
            let marked = try await shutterpipe(["shots", "--config", config] + arguments, in: folder.path)
            #expect(marked.status == 0, "\(marked.stderr)")
            let tags = ungrouped(try await ExifTool.tags([photo + ".xmp"])[photo + ".xmp"] ?? [:])
            #expect(tags["Rating"] == rating && tags["Label"] == label, "\(arguments): \(tags)")
            #expect(tags["Creator"] == "Ann Example", "the files sink's metadata stays: \(tags)")
        }
        let rejected = ungrouped(try await ExifTool.tags([photo + ".xmp"])[photo + ".xmp"] ?? [:])
        #expect(rejected["Pick"] == "-1", "the reject is ours beside the stars: \(rejected)")
        session.send("capture\n")
        session.signal(SIGTERM)
        #expect(await session.wait().status == 0)
        let listed = try await listedShots(["--config", config, "--rejected"], in: folder)
        #expect(listed.map(\.id) == [id] && listed.first?.label == "Red" && listed.first?.rating == 4)
        #expect(try await listedShots(["--config", config, "--rating", ">=1"], in: folder).isEmpty, "a reject counts as no rating")
    }

    @Test("a sidecar another program wrote keeps everything it had: only Rating and Label change")
    func mergesForeignSidecar() async throws {
        let folder = TemporaryDirectory("catalogue-merge")
        let photo = folder.file("IMG_1.CR2")
        try Data("raw".utf8).writeTestFile(photo)
        let darktable = """
        <?xml version="1.0" encoding="UTF-8"?>
        <x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="XMP Core 4.4.0-Exiv2">
         <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
          <rdf:Description rdf:about=""
            xmlns:xmp="http://ns.adobe.com/xap/1.0/"
            xmlns:darktable="http://darktable.sf.net/"
            xmp:Rating="1"
            darktable:history_end="2">
           <darktable:history>
            <rdf:Seq>
             <rdf:li darktable:operation="exposure" darktable:enabled="1"/>
             <rdf:li darktable:operation="colorin" darktable:enabled="1"/>
            </rdf:Seq>
           </darktable:history>
          </rdf:Description>
         </rdf:RDF>
        </x:xmpmeta>

        """
        try darktable.writeTestFile(photo + ".xmp")
        try await offThePool { try XMPSidecar.write(.init(rating: 5, label: "Green"), to: photo + ".xmp") }  // fsyncs
        let text = try String(contentsOfFile: photo + ".xmp", encoding: .utf8)
        #expect(text.components(separatedBy: "xmp:Rating").count == 2, "one Rating, replaced: \(text)")
        #expect(text.contains("darktable:operation=\"colorin\"") && text.contains("darktable:history_end=\"2\""))
        let tags = ungrouped(try await ExifTool.tags([photo + ".xmp"])[photo + ".xmp"] ?? [:])
        #expect(tags["Rating"] == "5" && tags["Label"] == "Green" && tags["History_end"] == "2", "\(tags)")
        #expect(XMPSidecar.read(photo + ".xmp") == .init(rating: 5, label: "Green"))
        #expect(folder.names() == ["IMG_1.CR2", "IMG_1.CR2.xmp"], "no temporary file left")
    }

    @Test("marksInJPEG: the rating and label go into the JPEG itself too (for Lightroom), its image data and EXIF untouched, its digest recorded again")
    func marksInJPEG() async throws {
        let folder = TemporaryDirectory("catalogue-jpeg-marks")
        let config = try writeConfig(cataloguePipeline(folder.file("photos"), sink: "    exif:\n      Artist: Ann Example",
                                                       top: "catalogue:\n  marksInJPEG: true"), in: folder)
        _ = try await shutterpipe(["run", "--config", config], input: "capture\n", in: folder.path)
        let shot = try #require(try await listedShots(["--config", config], in: folder).first)
        let photo = try #require(shot.files.first?.path)
        let before = try Data(contentsOf: URL(fileURLWithPath: photo))
        let tagsBefore = ungrouped(try await ExifTool.tags([photo])[photo] ?? [:])
        for arguments in [["rate", "\(shot.id)", "5"], ["label", "\(shot.id)", "green"]] {
            let marked = try await shutterpipe(["shots", "--config", config] + arguments, in: folder.path)
            #expect(marked.status == 0, "\(marked.stderr)")
        }
        let after = try Data(contentsOf: URL(fileURLWithPath: photo))
        #expect(bytesFromStartOfScan(after) == bytesFromStartOfScan(before), "the image data is the same")
        let tags = ungrouped(try await ExifTool.tags([photo])[photo] ?? [:])
        #expect(tags["Rating"] == "5" && tags["Label"] == "Green", "\(tags)")
        #expect(tags["Artist"] == tagsBefore["Artist"] && tags["Artist"] == "Ann Example" && tags["DateTimeOriginal"] == tagsBefore["DateTimeOriginal"])
        let report = try await ExifTool.run(["-s3", "-validate", "-error", "-warning", photo])
        #expect(report.trimmingCharacters(in: .whitespacesAndNewlines) == "OK", "exiftool: \(report)")
        let listed = try #require(try await listedShots(["--config", config], in: folder).first?.files.first)
        #expect(listed.sha256 == (try await sha256sum(photo)) && listed.size == after.count)
        #expect(!folder.names("photos").contains { $0.contains("shutterpipe-tmp") })
    }

    @Test("marks in a JPEG with an MPF index (a camera's large preview after the photo): added, then changed to another size; the index follows and the preview stays reachable and identical")
    func marksInMultiPictureJPEG() async throws {
        let folder = TemporaryDirectory("catalogue-jpeg-marks-mpf")
        let secondary = SyntheticJPEG.make(width: 64, height: 48, shot: 2)
        let original = MultiPictureJPEG.make(primary: SyntheticJPEG.make(width: 320, height: 240, shot: 1), secondary: secondary)
        let photo = folder.file("IMG_0001.JPG")
        try original.writeTestFile(photo)
        let before = try #require(try await ExifTool.tags([photo])[photo])
        // The first mark adds an XMP segment; the second replaces it with a longer one.
        for (index, marks) in [ShotMarks(rating: 3), ShotMarks(rating: 5, label: "Green", pick: .picked)].enumerated() {
            try await offThePool { try XMPSidecar.writeIntoJPEG(marks, path: photo) }  // fsyncs
            let marked = try Data(contentsOf: URL(fileURLWithPath: photo))
            #expect(bytesFromStartOfScan(marked) == bytesFromStartOfScan(original), "mark \(index + 1): the image data is the same")
            #expect(try await ExifTool.binary(["-b", "-PreviewImage", photo]) == secondary, "mark \(index + 1): the MPF preview is reachable and identical")
            let after = try #require(try await ExifTool.tags([photo])[photo])
            #expect(Int(after["MPImage1:MPImageLength"] ?? "") == Int(before["MPImage1:MPImageLength"] ?? "")! + marked.count - original.count,
                    "mark \(index + 1): the primary image's length grew by what was inserted")
            #expect(after["XMP-xmp:Rating"] == (index == 0 ? "3" : "5"), "\(after)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["IMG_0001.JPG"], "no sidecar, no temporary file: the marks are in the JPEG")
    }

    @Test("keywords: added and removed into the sidecar's dc:subject (exiftool reads them), found with --keyword, and read back by rebuild")
    func keywords() async throws {
        let folder = TemporaryDirectory("catalogue-keywords")
        let config = try writeConfig(cataloguePipeline(folder.file("photos"), sink: "    sidecars: always\n    exif:\n      Artist: Ann Example\n      Keywords: [studio]"), in: folder)
        _ = try await shutterpipe(["run", "--config", config], input: "capture\ncapture\n", in: folder.path)
        let shots = try await listedShots(["--config", config], in: folder)
        try #require(shots.count == 2)
        let (id, photo) = (shots[1].id, try #require(shots[1].files.first?.path))
        for arguments in [["keyword", "\(id)", "look 12", "bride & groom", "x"], ["unkeyword", "\(id)", "x"]] {
            let changed = try await shutterpipe(["shots", "--config", config] + arguments, in: folder.path)
            #expect(changed.status == 0, "\(changed.stderr)")
        }
        let tags = ungrouped(try await ExifTool.tags([photo + ".xmp"], extra: ["-sep", "|"])[photo + ".xmp"] ?? [:])
        #expect(tags["Subject"] == "studio|look 12|bride & groom" && tags["Creator"] == "Ann Example", "the sink's keyword kept: \(tags)")
        #expect(try await listedShots(["--config", config, "--keyword", "LOOK 12"], in: folder).map(\.id) == [id])
        #expect(try await listedShots(["--config", config], in: folder).first { $0.id == id }?.keywords.sorted() == ["bride & groom", "look 12"])
        let rebuilt = try await shutterpipe(["shots", "rebuild", folder.file("photos"), "--catalogue", folder.file("rebuilt.sqlite")], in: folder.path)
        #expect(rebuilt.status == 0, "\(rebuilt.stderr)")
        let found = try await listedShots(["--catalogue", folder.file("rebuilt.sqlite"), "--keyword", "bride & groom"], in: folder)
        #expect(found.count == 1 && found.first?.files.first?.path == photo && found.first?.keywords == ["bride & groom", "look 12", "studio"])
    }

    @Test("every editor finds the marks by default: a RAW's in both IMG.CR2.xmp (darktable) and IMG.xmp (Lightroom, Capture One), in step; its JPEG's inside the JPEG (Lightroom); a reject keeps the stars in all three")
    func everyEditorReadsThem() async throws {
        let folder = TemporaryDirectory("catalogue-editors")
        let config = try writeConfig(cataloguePipeline(folder.file("photos"), backend: "  directory: \(repositoryRoot)/Plugins/FileStub/Tests/Fixtures"), in: folder)
        let run = try await shutterpipe(["run", "--config", config], input: "capture\ncapture\n", in: folder.path)
        #expect(run.status == 0, "\(run.stderr)")
        let shots = try await listedShots(["--config", config], in: folder)
        let pair = try #require(shots.first { $0.files.count == 2 }, "the RAW+JPEG shot")
        let raw = try #require(pair.files.first { $0.kind == .raw }?.path), jpeg = try #require(pair.files.first { $0.kind == .jpeg }?.path)
        let stem = (raw as NSString).deletingPathExtension
        for (step, rating, pick) in [(["rate", "\(pair.id)", "3"], "3", nil as String?), (["reject", "\(pair.id)"], "3", "-1")] {
            let marked = try await shutterpipe(["shots", "--config", config] + step, in: folder.path)
            #expect(marked.status == 0, "\(marked.stderr)")
            let files = [raw + ".xmp", stem + ".xmp", jpeg]
            let read = try await ExifTool.tags(files)
            for file in files {
                let tags = ungrouped(read[file] ?? [:])
                #expect(tags["Rating"] == rating, "\(step) \(file): \(tags["Rating"] ?? "none")")
                if file.hasSuffix(".xmp") { #expect(tags["Pick"] == pick, "\(step) \(file): \(tags["Pick"] ?? "none")") }
            }
        }
    }
}
