#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeFixtures
import ShutterPipeImaging
import ShutterPipeKit
import TestSupport
import Testing
@testable import WebTrigger

/// A DNG made by Tests/RawSamples/make_dng.py: a Bayer mosaic (a bright square in the top-left
/// quarter, gradients elsewhere), with an embedded JPEG preview or without.
func makeDNG(_ path: String, width: Int, height: Int, preview: Data? = nil, orientation: Int = 1, in folder: TemporaryDirectory) async throws {
    var arguments = ["python3", "\(repositoryRoot)/Tests/RawSamples/make_dng.py", path, "--width", "\(width)", "--height", "\(height)",
                     "--orientation", "\(orientation)"]
    if let preview {
        let previewPath = folder.file("preview-\(UUID().uuidString.prefix(6)).jpg")
        try preview.writeTestFile(previewPath)
        arguments += ["--preview", previewPath]
    }
    let made = try await runProgram(arguments)
    try #require(made.status == 0, "make_dng.py: \(made.errors)")
}

/// A binary PPM (P6), as dcraw_emu writes it: width, height, RGB bytes.
func readPPM(_ path: String) throws -> RGBImage {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    var fields: [String] = []
    var index = data.startIndex
    while fields.count < 4 {
        while index < data.endIndex, data[index] == 0x20 || data[index] == 0x0A { index += 1 }
        let start = index
        while index < data.endIndex, data[index] != 0x20 && data[index] != 0x0A { index += 1 }
        fields.append(String(decoding: data[start..<index], as: UTF8.self))
    }
    index += 1
    guard fields[0] == "P6", let width = Int(fields[1]), let height = Int(fields[2]), fields[3] == "255" else {
        throw TestSupportError("not an 8-bit P6 PPM: \(fields)")
    }
    return RGBImage(pixels: [UInt8](data[index..<(index + width * height * 3)]), width: width, height: height)
}

/// The mean absolute difference of two images of one size, per channel value.
func meanDifference(_ a: RGBImage, _ b: RGBImage) -> Double {
    guard a.width == b.width, a.height == b.height else { return .infinity }
    var total = 0
    for index in 0..<a.pixels.count { total += abs(Int(a.pixels[index]) - Int(b.pixels[index])) }
    return Double(total) / Double(a.pixels.count)
}

/// The mean brightness of a region (fractions of the width and height).
func brightness(_ image: RGBImage, x: ClosedRange<Double>, y: ClosedRange<Double>) -> Double {
    var total = 0, count = 0
    for row in Int(y.lowerBound * Double(image.height))..<Int(y.upperBound * Double(image.height)) {
        for column in Int(x.lowerBound * Double(image.width))..<Int(x.upperBound * Double(image.width)) {
            let index = (row * image.width + column) * 3
            total += Int(image.pixels[index]) + Int(image.pixels[index + 1]) + Int(image.pixels[index + 2])
            count += 3
        }
    }
    return Double(total) / Double(max(1, count))
}

@Suite("web previews of RAW and HEIF photos", .timeLimit(.minutes(2)))
struct RawPreviewTests {
    @Test("a RAW with a large embedded JPEG: that JPEG is the source (byte for byte what simple_dcraw extracts), turned upright")
    func embeddedJPEG() async throws {
        let folder = TemporaryDirectory("raw-embedded")
        let embedded = try await offThePool { SyntheticJPEG.make(width: 1920, height: 1280, shot: 7) }
        let dng = folder.file("IMG_0001.dng")
        try await makeDNG(dng, width: 600, height: 400, preview: embedded, orientation: 6, in: folder)
        let (preview, source) = try await offThePool { try PreviewMaker.make(dng, longEdge: 1600) }
        #expect(source == .embedded)
        // 1920×1280 decoded at 6/8, then a quarter turn clockwise (orientation 6).
        #expect(dimensions(preview) == [960, 1440])
        _ = try await runProgram(["simple_dcraw", "-e", dng])
        let extracted = try Data(contentsOf: URL(fileURLWithPath: dng + ".thumb.jpg"))
        #expect(bytesFromStartOfScan(extracted) == bytesFromStartOfScan(embedded), "LibRaw's thumbnail is the JPEG the DNG carries")
    }

    @Test("a RAW without an embedded JPEG, or with a small one: a half-size demosaic, matching dcraw_emu's within JPEG's error, upright",
          arguments: [1, 6])
    func demosaic(orientation: Int) async throws {
        let folder = TemporaryDirectory("raw-demosaic")
        let thumbnail = try await offThePool { SyntheticJPEG.make(width: 160, height: 120, shot: 3) }
        let dng = folder.file("IMG_0002.dng")
        try await makeDNG(dng, width: 800, height: 600, preview: orientation == 1 ? thumbnail : nil, orientation: orientation, in: folder)
        let (preview, source) = try await offThePool { try PreviewMaker.make(dng, longEdge: 1600) }
        #expect(source == .demosaic)
        let ours = try JPEGDecoder.decodeScaled(preview, longEdge: 10_000).image
        #expect(orientation == 1 ? [ours.width, ours.height] == [400, 300] : [ours.width, ours.height] == [300, 400])
        // dcraw_emu: half size (-h), the camera's white balance (-w), 8 bits, to a PPM.
        let developed = try await runProgram(["dcraw_emu", "-h", "-w", dng])
        try #require(developed.status == 0, "dcraw_emu: \(developed.errors)")
        let reference = try readPPM(dng + ".ppm")
        let difference = meanDifference(ours, reference)
        #expect(difference < 4, "mean difference \(difference) per value against dcraw_emu")
        // The bright square stays where the photographer saw it: top left, or top right
        // once a clockwise quarter turn is applied.
        let square = orientation == 1 ? brightness(ours, x: 0.02...0.2, y: 0.02...0.2) : brightness(ours, x: 0.8...0.98, y: 0.02...0.2)
        let opposite = brightness(ours, x: 0.4...0.6, y: 0.4...0.6)
        #expect(square > opposite + 40, "square \(square), middle \(opposite)")
    }

    @Test("a HEIF photo: decoded by libheif, scaled to the long edge, matching heif-convert's decoding within JPEG's error")
    func heif() async throws {
        let folder = TemporaryDirectory("heif")
        let source = folder.file("source.jpg")
        try await offThePool { SyntheticJPEG.make(width: 1280, height: 800, shot: 5) }.writeTestFile(source)
        let heic = folder.file("IMG_0003.heic")
        let encoded = try await runProgram(["heif-enc", "-q", "90", "-o", heic, source])
        try #require(encoded.status == 0, "heif-enc: \(encoded.errors)")
        let (preview, kind) = try await offThePool { try PreviewMaker.make(heic, longEdge: 640) }
        #expect(kind == .heif)
        #expect(dimensions(preview) == [640, 400])
        let converted = folder.file("converted.jpg")
        let decoded = try await runProgram(["heif-convert", "-q", "95", heic, converted])
        try #require(decoded.status == 0, "heif-convert: \(decoded.errors)")
        let reference = try JPEGDecoder.decodeScaled(try Data(contentsOf: URL(fileURLWithPath: converted)), longEdge: 640).image
        let ours = try JPEGDecoder.decodeScaled(preview, longEdge: 10_000).image
        #expect(meanDifference(ours, reference) < 6, "against heif-convert, halved by libjpeg-turbo")
    }

    @Test("a shot's preview comes from its JPEG when it has one (RAW+JPEG), else its HEIF, else its RAW; other files have none")
    func sourceChoice() {
        #expect(PreviewMaker.previewSource(["/a/IMG_1.CR2", "/a/IMG_1.JPG"]) == "/a/IMG_1.JPG")
        #expect(PreviewMaker.previewSource(["/a/IMG_1.NEF"]) == "/a/IMG_1.NEF")
        #expect(PreviewMaker.previewSource(["/a/IMG_1.arw", "/a/IMG_1.HEIC"]) == "/a/IMG_1.HEIC")
        #expect(PreviewMaker.previewSource(["/a/IMG_1.xmp", "/a/notes.txt"]) == nil)
    }
}

@Suite("web page: RAW shoots through the virtual camera", .timeLimit(.minutes(3)))
struct RawShootTests {
    @Test("a RAW+JPEG shoot and a RAW-only shoot through libgphoto2: /api/photos offers a preview for each, from the JPEG and from the RAW")
    func rawShoots() async throws {
        let folder = TemporaryDirectory("raw-shoots")
        let embedded = try await offThePool { SyntheticJPEG.make(width: 1920, height: 1280, shot: 9) }
        let pair = folder.file("pair"), rawOnly = folder.file("raw-only")
        for card in [pair, rawOnly] { try FileManager.default.createDirectory(atPath: card, withIntermediateDirectories: true) }
        try await makeDNG("\(pair)/IMG_0001.DNG", width: 600, height: 400, preview: embedded, in: folder)
        try await offThePool { SyntheticJPEG.make(width: 2000, height: 1500, shot: 1) }.writeTestFile("\(pair)/IMG_0001.JPG")
        try await makeDNG("\(rawOnly)/IMG_0002.DNG", width: 600, height: 400, preview: embedded, in: folder)

        // (the card, objects per capture, the preview's size: the JPEG's 2000×1500 at 6/8, or the embedded 1920×1280 at 6/8)
        for (card, objects, expected) in [(pair, 2, [1500, 1125]), (rawOnly, 1, [1440, 960])] {
            let camera = try await FakeCamera(["--images", card, "--objects-per-capture", "\(objects)"])
            let config = try writeConfig("""
            version: 1
            session: raw
            backend: {type: gphoto2, port: "\(camera.portSpec)"}
            triggers:
              - type: stdin
              - {type: web, listen: "127.0.0.1:0"}
            sinks: [{type: files, directory: \(folder.file("out-\(objects)")), filename: "{name}.{ext}"}]
            coordinator: {captureTimeout: 20s, enterTimeout: 20s}
            """, in: folder, name: "raw-\(objects).yaml")
            let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
            let port = try #require(await webPort(session))
            session.send("capture\n")
            #expect(await session.waitForOutput("photoSuccess", on: .stdout))
            // The page hears of a shot after its trigger was answered.
            #expect(await eventually { ((try? await http("GET", "/api/photos", port: port))?.json?["photos"] as? [[String: Any]])?.isEmpty == false })
            let photos = try #require(try await http("GET", "/api/photos", port: port).json?["photos"] as? [[String: Any]])
            let shot = try #require(photos.first)
            #expect((shot["paths"] as? [String])?.count == objects, "\(shot)")
            let route = try #require(shot["preview"] as? String, "a preview is offered: \(shot)")
            let preview = try await http("GET", route, port: port)
            #expect(preview.status == 200 && dimensions(preview.body) == expected, "\(card): \(preview.status) \(dimensions(preview.body))")
            session.signal(SIGTERM)  // a web trigger keeps a session open until it is stopped
            #expect(await session.wait().status == 0)
        }
    }
}
