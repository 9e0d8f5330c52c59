@testable import FilesSink
import Foundation
import ShutterPipeFixtures
import ShutterPipeImaging
import ShutterPipeKit
import ShutterPipeKit
import TestSupport
import Testing

/// A synthetic camera JPEG, optionally with EXIF that exiftool (the reference writer)
/// adds, as a camera would have.
func cameraJPEG(_ exiftoolArguments: [String] = [], width: Int = 320, height: Int = 240, in folder: TemporaryDirectory,
                name: String = "source.jpg") async throws -> Data {
    let path = folder.file(name)
    // Made on a thread of its own: in a debug build it takes a while, which on the
    // cooperative pool would starve the tests running beside this one.
    try await offThePool { try SyntheticJPEG.make(width: width, height: height, shot: 1).writeTestFile(path) }
    if !exiftoolArguments.isEmpty {
        try await ExifTool.run(["-q", "-overwrite_original"] + exiftoolArguments + [path])
    }
    return try Data(contentsOf: URL(fileURLWithPath: path))
}

var studioExif: [String: Any] { [
    "Artist": "Jane Doe", "Copyright": "(c) 2026 Jane Doe", "ImageDescription": "{session} shot {seq}",
    "Software": "shutterpipe", "ImageUniqueID": "{uuid}",
] }

/// Stores `files` through a files sink with the given options and returns the receipt.
func storeTagged(_ files: [(String, Data)], exif: [String: Any] = studioExif, extra: [String: Any] = [:],
                 in folder: TemporaryDirectory, time: Date = Date(timeIntervalSince1970: 1_780_000_000.25)) async throws -> SinkReceipt {
    var options: [String: Any] = ["directory": folder.file("out"), "filename": "{name}.{ext}", "exif": exif]
    options.merge(extra) { $1 }
    let sink = FilesSink(options: try FilesSink.Options(PluginOptions(configNode(options), owner: "sink 'files'")))
    let photo = CapturedPhoto(files: files.map { CapturedFile(name: $0.0, data: $0.1) }, camera: "TestCam")
    return try await sink.store(photo, context: ShotContext(session: "portrait", shot: ShotID(run: "test", number: 1), captureTime: time, camera: "TestCam", trigger: "stdin"))
}

/// Checks that tagging kept every camera tag, added no validate message and left the
/// bytes from SOS on identical.
func expectCameraMetadataIntact(original: String, tagged: String, alsoChanged: Set<String> = [],
                                sourceLocation: Testing.SourceLocation = #_sourceLocation) async throws {
    let tags = try await ExifTool.tags([original, tagged])
    let damage = ExifTool.damage(original: tags[original] ?? [:], tagged: tags[tagged] ?? [:], ours: tagsShutterpipeWrites.union(alsoChanged))
    #expect(damage.isEmpty, "camera metadata damaged: \(damage)", sourceLocation: sourceLocation)
    let messages = try await ExifTool.validationMessages([original, tagged])
    let new = (messages[tagged] ?? []).subtracting(messages[original] ?? []).filter { !$0.hasSuffix("Warnings") && !$0.hasSuffix("Warning") }
    #expect(new.isEmpty, "new validation messages: \(new)", sourceLocation: sourceLocation)
    let before = try Data(contentsOf: URL(fileURLWithPath: original)), after = try Data(contentsOf: URL(fileURLWithPath: tagged))
    #expect(bytesFromStartOfScan(before) == bytesFromStartOfScan(after), "image data changed", sourceLocation: sourceLocation)
}

@Suite("files sink: EXIF tagging", .timeLimit(.minutes(2)))
struct ExifTests {
    @Test("a JPEG without EXIF gets a new valid block with our tags (libexif builds it)")
    func noExif() async throws {
        let folder = TemporaryDirectory("exif-none")
        let source = try await cameraJPEG(in: folder)
        let receipt = try await storeTagged([("IMG_0001.JPG", source)], in: folder)
        let path = try #require(receipt.files.first?.location)
        let tags = try #require(try await ExifTool.tags([path])[path])
        #expect(tags["IFD0:Artist"] == "Jane Doe")
        #expect(tags["IFD0:Copyright"] == "(c) 2026 Jane Doe")
        #expect(tags["IFD0:ImageDescription"] == "portrait shot 0")
        #expect(tags["ExifIFD:ExifVersion"] == "0232")
        #expect(tags["ExifIFD:ExifImageWidth"] == "320")
        #expect(tags["ExifIFD:ColorSpace"] == "sRGB")
        #expect(tags["ExifIFD:ImageUniqueID"]?.count == 32)
        #expect(tags["ExifIFD:DateTimeOriginal"] != nil && tags["ExifIFD:SubSecTimeOriginal"] == "250")
        #expect(tags["ExifIFD:OffsetTimeOriginal"]?.count == 6)
        #expect(try await ExifTool.validationMessages([path])[path] == [])
        #expect(bytesFromStartOfScan(source) == bytesFromStartOfScan(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(receipt.warnings.isEmpty)
    }

    @Test("camera EXIF in either byte order keeps its order and every tag", arguments: ["MM", "II"])
    func byteOrders(order: String) async throws {
        let folder = TemporaryDirectory("exif-\(order)")
        let source = try await cameraJPEG(["-ExifByteOrder=\(order)", "-Make=TestCam", "-Model=X-1", "-DateTimeOriginal=2025:06:01 10:11:12",
                                     "-ExposureTime=1/125", "-FNumber=8", "-ISO=200", "-ThumbnailImage<=/dev/null"], in: folder)
        let receipt = try await storeTagged([("DSC_0042.JPG", source)], in: folder)
        let path = try #require(receipt.files.first?.location)
        try await expectCameraMetadataIntact(original: folder.file("source.jpg"), tagged: path)
        let tags = try #require(try await ExifTool.tags([path])[path])
        #expect(tags["File:ExifByteOrder"]?.contains(order == "MM" ? "Big-endian" : "Little-endian") == true)
        #expect(tags["IFD0:Artist"] == "Jane Doe")
        #expect(tags["ExifIFD:DateTimeOriginal"] == "2025:06:01 10:11:12")  // the camera's time stays (ifMissing)
        #expect(tags["IFD0:Make"] == "TestCam" && tags["ExifIFD:ISO"] == "200")
    }

    @Test("an APP1 near 64 KiB: camera EXIF kept byte-identical, our metadata as XMP")
    func nearLimit() async throws {
        let folder = TemporaryDirectory("exif-big")
        let filler = String(repeating: "x", count: 65_380)
        let source = try await cameraJPEG(["-Make=TestCam", "-ImageDescription=\(filler)"], in: folder)
        let layout = try JPEGLayout(source)
        let cameraBlock = try #require(layout.exifSegments.first).range
        #expect(cameraBlock.count > 65_000)
        let receipt = try await storeTagged([("BIG.JPG", source)], in: folder)
        let path = try #require(receipt.files.first?.location)
        let output = try Data(contentsOf: URL(fileURLWithPath: path))
        let outLayout = try JPEGLayout(output)
        #expect(outLayout.data[try #require(outLayout.exifSegments.first).range] == source[cameraBlock])
        #expect(outLayout.hasXMP)
        let tags = try #require(try await ExifTool.tags([path])[path])
        #expect(tags["XMP-dc:Creator"] == "Jane Doe")
        #expect(tags["XMP-dc:Rights"] == "(c) 2026 Jane Doe")
        #expect(tags["IFD0:ImageDescription"] == filler)
        try await expectCameraMetadataIntact(original: folder.file("source.jpg"), tagged: path)
    }

    @Test("duplicate Exif APP1 segments: the first is edited, the copy dropped")
    func duplicateApp1() async throws {
        let folder = TemporaryDirectory("exif-dup")
        let source = try await cameraJPEG(["-Make=TestCam", "-Model=Dup"], in: folder)
        let layout = try JPEGLayout(source)
        let app1 = try #require(layout.exifSegments.first).range
        var doubled = source
        doubled.insert(contentsOf: source[app1], at: app1.upperBound)
        try doubled.writeTestFile(folder.file("doubled.jpg"))
        #expect(try JPEGLayout(doubled).exifSegments.count == 2)
        let receipt = try await storeTagged([("DUP.JPG", doubled)], in: folder)
        let path = try #require(receipt.files.first?.location)
        #expect(try JPEGLayout(Data(contentsOf: URL(fileURLWithPath: path))).exifSegments.count == 1)
        try await expectCameraMetadataIntact(original: folder.file("doubled.jpg"), tagged: path)
        #expect(try await ExifTool.tags([path])[path]?["IFD0:Artist"] == "Jane Doe")
    }

    @Test("MPF: the second image stays reachable and identical")
    func mpf() async throws {
        let folder = TemporaryDirectory("exif-mpf")
        let primary = try await cameraJPEG(["-Make=TestCam"], in: folder)
        let secondary = SyntheticJPEG.make(width: 64, height: 48, shot: 2)
        let mpo = MultiPictureJPEG.make(primary: primary, secondary: secondary)
        try mpo.writeTestFile(folder.file("mpo.jpg"))
        #expect(try await extractMPImage2(folder.file("mpo.jpg"), in: folder) == secondary)  // the fixture itself is right
        let receipt = try await storeTagged([("MPO.JPG", mpo)], exif: ["Artist": "Jürgen Müller"], in: folder)
        let path = try #require(receipt.files.first?.location)
        let extracted = try await extractMPImage2(path, in: folder)
        #expect(extracted == secondary)
        // The primary image grew by what was inserted, and the index says so.
        let grown = try Data(contentsOf: URL(fileURLWithPath: path)).count - mpo.count
        let before = try #require(try await ExifTool.tags([folder.file("mpo.jpg")])[folder.file("mpo.jpg")])
        let after = try #require(try await ExifTool.tags([path])[path])
        #expect(Int(after["MPImage1:MPImageLength"] ?? "") == Int(before["MPImage1:MPImageLength"] ?? "")! + grown)
        #expect(after["MPImage2:MPImageLength"] == before["MPImage2:MPImageLength"])
        try await expectCameraMetadataIntact(original: folder.file("mpo.jpg"), tagged: path, alsoChanged: ["MPImageLength", "MPImageStart"])
    }

    @Test("a JPEG truncated in its header is stored as received, with a sidecar and a warning")
    func truncatedHeader() async throws {
        let folder = TemporaryDirectory("exif-trunc")
        let source = try await cameraJPEG(["-Make=TestCam"], in: folder)
        let cut = source.prefix(try #require(JPEGLayout(source).segments.last).range.lowerBound + 10)
        let receipt = try await storeTagged([("CUT.JPG", Data(cut))], in: folder)
        #expect(receipt.files.map { ($0.location as NSString).lastPathComponent } == ["CUT.jpg", "CUT.jpg.xmp"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: receipt.files[0].location)) == Data(cut))
        #expect(receipt.warnings.count == 1 && receipt.warnings[0].contains("is damaged"))
        let sidecar = receipt.files[1].location
        #expect(try await ExifTool.tags([sidecar])[sidecar]?["XMP-dc:Creator"] == "Jane Doe")
    }

    @Test("a JPEG truncated in its scan data is still tagged")
    func truncatedScan() async throws {
        let folder = TemporaryDirectory("exif-scan")
        let source = try await cameraJPEG(["-Make=TestCam"], in: folder)
        let cut = Data(source.prefix(source.count - 300))
        try cut.writeTestFile(folder.file("cut.jpg"))
        let receipt = try await storeTagged([("SCAN.JPG", cut)], in: folder)
        let path = try #require(receipt.files.first?.location)
        #expect(try await ExifTool.tags([path])[path]?["IFD0:Artist"] == "Jane Doe")
        try await expectCameraMetadataIntact(original: folder.file("cut.jpg"), tagged: path)
    }

    @Test("non-ASCII text reads correctly as UTF-8, as XP tags and as XMP")
    func unicode() async throws {
        let folder = TemporaryDirectory("exif-unicode")
        let source = try await cameraJPEG(["-Make=TestCam"], in: folder)
        let exif: [String: Any] = ["Artist": "Jürgen Müller", "ImageDescription": "撮影スタジオ", "Copyright": "© 2026 Jürgen",
                                   "UserComment": "Grüße", "Keywords": ["studio", "ポートレート"]]
        let receipt = try await storeTagged([("U.JPG", source)], exif: exif, in: folder)
        let path = try #require(receipt.files.first?.location)
        let tags = try #require(try await ExifTool.tags([path])[path])
        #expect(tags["IFD0:Artist"] == "Jürgen Müller")
        #expect(tags["IFD0:XPAuthor"] == "Jürgen Müller")
        #expect(tags["IFD0:XPTitle"] == "撮影スタジオ")
        #expect(tags["IFD0:XPKeywords"] == "studio;ポートレート")
        #expect(tags["ExifIFD:UserComment"] == "Grüße")
        #expect(tags["XMP-dc:Creator"] == "Jürgen Müller")
        #expect(tags["XMP-dc:Rights"] == "© 2026 Jürgen")
        #expect(tags["XMP-dc:Description"] == "撮影スタジオ")
        #expect(tags["XMP-dc:Subject"]?.contains("ポートレート") == true)
        try await expectCameraMetadataIntact(original: folder.file("source.jpg"), tagged: path)
    }

    @Test("a camera's own XMP is never touched; Unicode then rides in the XP tags")
    func cameraXMPKept() async throws {
        let folder = TemporaryDirectory("exif-cxmp")
        let source = try await cameraJPEG(["-Make=TestCam", "-XMP-dc:Title=camera title"], in: folder)
        let sourceLayout = try JPEGLayout(source)
        let exifRanges = sourceLayout.exifSegments.map(\.range)
        let cameraXMP = try #require(sourceLayout.segments.first { $0.marker == 0xE1 && !exifRanges.contains($0.range) }).range
        let receipt = try await storeTagged([("X.JPG", source)], exif: ["Artist": "Jürgen"], in: folder)
        let output = try Data(contentsOf: URL(fileURLWithPath: receipt.files[0].location))
        #expect(output.range(of: source[cameraXMP]) != nil)
        let tags = try #require(try await ExifTool.tags([receipt.files[0].location])[receipt.files[0].location])
        #expect(tags["IFD0:XPAuthor"] == "Jürgen")
        #expect(tags["XMP-dc:Title"] == "camera title")
    }

    @Test("RAW, HEIF-like and PNG files are stored byte-identical with an XMP sidecar", arguments: ["append", "replace"])
    func sidecars(naming: String) async throws {
        let folder = TemporaryDirectory("exif-raw-\(naming)")
        let raw = Data("II*\u{0}\u{10}\u{0}\u{0}\u{0}CR\u{2}\u{0} not really a CR2".utf8)
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + Data("rest".utf8)
        let receipt = try await storeTagged([("IMG_1.CR2", raw), ("IMG_2.PNG", png)], extra: ["sidecarName": naming], in: folder)
        let names = receipt.files.map { ($0.location as NSString).lastPathComponent }
        #expect(names == (naming == "append" ? ["IMG_1.cr2", "IMG_1.cr2.xmp", "IMG_2.png", "IMG_2.png.xmp"]
                                              : ["IMG_1.cr2", "IMG_1.xmp", "IMG_2.png", "IMG_2.xmp"]))
        #expect(try Data(contentsOf: URL(fileURLWithPath: receipt.files[0].location)) == raw)
        #expect(try Data(contentsOf: URL(fileURLWithPath: receipt.files[2].location)) == png)
        let sidecar = receipt.files[1].location
        let tags = try #require(try await ExifTool.tags([sidecar])[sidecar])
        #expect(tags["XMP-dc:Creator"] == "Jane Doe")
        #expect(tags["XMP-xmp:CreateDate"]?.hasPrefix("2026:") == true)
        #expect(Set(receipt.files.compactMap(\.sequence)).count <= 1)
    }

    @Test("sidecars: always writes one for JPEGs too; never writes none")
    func sidecarPolicy() async throws {
        let folder = TemporaryDirectory("exif-policy")
        let jpeg = try await cameraJPEG(in: folder)
        let always = try await storeTagged([("A.JPG", jpeg)], extra: ["sidecars": "always"], in: folder)
        #expect(always.files.map { ($0.location as NSString).lastPathComponent } == ["A.jpg", "A.jpg.xmp"])
        let never = try await storeTagged([("B.CR2", Data("raw".utf8))], extra: ["sidecars": "never"], in: folder)
        #expect(never.files.count == 1)
    }
}

/// The real camera corpus: every file keeps every camera tag and gains ours.
@Suite("files sink: EXIF on real camera JPEGs", .timeLimit(.minutes(2)))
struct CameraCorpusTests {
    @Test("every sample passes the exiftool checks")
    func corpus() async throws {
        guard let folder = cameraSampleFolder else {
            print("camera JPEG corpus not found (set SHUTTERPIPE_CAMERA_JPEGS or provide ../shared/samples/camera-jpegs); corpus test has nothing to check")
            return
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.lowercased().hasSuffix(".jpg") }.sorted()
        #expect(!names.isEmpty)
        let output = TemporaryDirectory("corpus")
        let files = try names.map { ($0, try Data(contentsOf: URL(fileURLWithPath: "\(folder)/\($0)"))) }
        var exif = studioExif
        exif["Artist"] = "Jürgen Müller"
        exif["Copyright"] = "© 2026 Studio"
        let receipt = try await storeTagged(files, exif: exif, in: output)
        let stored = receipt.files.filter { !$0.location.hasSuffix(".xmp") }.map(\.location)
        #expect(stored.count == names.count)
        let originals = names.map { "\(folder)/\($0)" }
        let tags = try await ExifTool.tags(originals + stored)
        let messages = try await ExifTool.validationMessages(originals + stored)
        for (original, tagged) in zip(originals, stored) {
            let damage = ExifTool.damage(original: tags[original] ?? [:], tagged: tags[tagged] ?? [:], ours: tagsShutterpipeWrites)
            #expect(damage.isEmpty, "\(original): \(damage)")
            let new = (messages[tagged] ?? []).subtracting(messages[original] ?? []).filter { !$0.hasSuffix("Warnings") && !$0.hasSuffix("Warning") }
            #expect(new.isEmpty, "\(original): new validation messages \(new)")
            let artist = tags[tagged]?["IFD0:Artist"] ?? tags[tagged]?["XMP-dc:Creator"]
            #expect(artist == "Jürgen Müller", "\(original): Artist reads \(artist ?? "nothing")")
            #expect(bytesFromStartOfScan(try Data(contentsOf: URL(fileURLWithPath: original)))
                    == bytesFromStartOfScan(try Data(contentsOf: URL(fileURLWithPath: tagged))), "\(original): image data changed")
        }
    }
}

/// A primary JPEG with an MPF APP2 index pointing at `secondary`, appended after it.
func extractMPImage2(_ path: String, in folder: TemporaryDirectory) async throws -> Data {
    // A "Large Thumbnail" MP image reads as PreviewImage.
    try await ExifTool.binary(["-b", "-PreviewImage", path])
}
