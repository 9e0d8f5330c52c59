import Foundation
import ShutterPipeFixtures
import TestSupport
import Testing
@testable import WebTrigger

@Suite("web: photos upright and in their own colours", .timeLimit(.minutes(3)))
struct ColourTests {
    @Test("a JPEG shot on its side (EXIF orientation 6) with an ICC profile: its preview, thumbnail and 100 % tiles are upright and carry the same profile, as Pillow reads them; the tile's pixels are Pillow's")
    func profileAndOrientation() async throws {
        let folder = TemporaryDirectory("colour")
        let photo = folder.file("IMG_0001.JPG")
        let made = try await runProgram(["/usr/bin/python3", "\(repositoryRoot)/Tests/Browser/pixels.py", "tagged", photo, "900", "600", "6"])
        try #require(made.status == 0, "\(made.errors)")
        let source = try await pillow(["profile", photo])
        let icc = try #require(source["icc"] as? String)
        let previews = PreviewMaker(longEdge: 300), tiles = FullImageCache(limit: 64 << 20)
        let (preview, thumbnail, tile) = try await offThePool {
            (try previews.preview(of: photo), try previews.thumbnail(of: photo), try tiles.tile(of: photo, column: 0, row: 1))
        }
        for (name, data) in [("preview.jpg", preview), ("thumbnail.jpg", thumbnail), ("tile.png", try #require(tile))] {
            try data.writeTestFile(folder.file(name))
        }
        let shown = try await pillow(["profile", folder.file("preview.jpg")])
        // 900×600 decoded at 2/8 (the largest n/8 within 300), then turned: 150×225.
        #expect(shown["icc"] as? String == icc && shown["width"] as? Int == 150 && shown["height"] as? Int == 225, "upright, 150×225: \(shown)")
        let small = try await pillow(["profile", folder.file("thumbnail.jpg")])
        #expect(small["icc"] as? String == icc && (small["height"] as? Int ?? 0) > (small["width"] as? Int ?? 0), "\(small)")
        let cut = try await pillow(["profile", folder.file("tile.png")])
        #expect(cut["icc"] as? String == icc && cut["width"] as? Int == 512 && cut["height"] as? Int == 900 - 512, "tile 0-1 of the upright 600×900: \(cut)")
        let difference = try await pillow(["compare", folder.file("tile.png"), "0", "0", photo, "0", "512", "512", "388"])
        #expect(difference["max"] as? Int == 0, "the tile against Pillow's upright decode: \(difference)")
    }

    @Test("a JPEG that says Adobe RGB only in EXIF (ColorSpace uncalibrated, InteropIndex R03, no profile): its preview and tiles carry an Adobe RGB (1998) profile that exiftool reads with Adobe RGB's primaries and white, and littleCMS maps its mid grey to sRGB's")
    func adobeRGBFromEXIF() async throws {
        let folder = TemporaryDirectory("colour-adobe")
        let photo = folder.file("IMG_0002.JPG")
        let jpeg = try await offThePool { SyntheticJPEG.make(width: 800, height: 600, shot: 2) }
        try jpeg.writeTestFile(photo)
        let tagged = try await runProgram(["exiftool", "-q", "-overwrite_original", "-ColorSpace#=65535", "-InteropIndex=R03", photo])
        try #require(tagged.status == 0, "\(tagged.errors)")
        #expect(try await pillow(["profile", photo])["icc"] is NSNull, "the photo itself has no profile")
        let previews = PreviewMaker(longEdge: 400), tiles = FullImageCache(limit: 64 << 20)
        let (preview, tile) = try await offThePool { (try previews.preview(of: photo), try tiles.tile(of: photo, column: 0, row: 0)) }
        try preview.writeTestFile(folder.file("preview.jpg"))
        try #require(tile).writeTestFile(folder.file("tile.png"))
        let read = try await ExifTool.run(["-s", "-ICC_Profile:ProfileDescription", "-ICC_Profile:RedMatrixColumn", "-ICC_Profile:GreenMatrixColumn",
                                           "-ICC_Profile:BlueMatrixColumn", "-ICC_Profile:MediaWhitePoint", folder.file("preview.jpg")])
        for line in ["Adobe RGB (1998) compatible", "0.60974 0.31111 0.01947", "0.20528 0.62567 0.06087", "0.14919 0.06322 0.74457", "0.95045 1 1.08905"] {
            #expect(read.contains(line), "exiftool: \(read)")
        }
        for image in ["preview.jpg", "tile.png"] {
            let icc = try await pillow(["icc", folder.file(image)])
            let grey = icc["grey"] as? [Int] ?? []
            #expect(icc["description"] as? String == "Adobe RGB (1998) compatible" && grey.count == 3 && grey.allSatisfy { abs($0 - 128) <= 3 }, "\(image): \(icc)")
        }
    }
}
