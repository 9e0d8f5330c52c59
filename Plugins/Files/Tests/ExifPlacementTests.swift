@testable import FilesSink
import Foundation
import ShutterPipeFixtures
import ShutterPipeImaging
import ShutterPipeKit
import ShutterPipeKit
import TestSupport
import Testing

@Suite("files sink: EXIF capture time, location, tag table and mistakes", .timeLimit(.minutes(2)))
struct ExifPlacementTests {
    @Test("capture time: ifMissing keeps the camera's, always replaces it, never adds none", arguments: ["ifMissing", "always", "never"])
    func captureTime(policy: String) async throws {
        let folder = TemporaryDirectory("exif-time-\(policy)")
        let withTime = try await cameraJPEG(["-DateTimeOriginal=2020:01:02 03:04:05"], in: folder, name: "timed.jpg")
        let without = try await cameraJPEG(["-Make=TestCam"], in: folder, name: "untimed.jpg")
        var exif = studioExif
        exif["captureTime"] = policy
        let receipt = try await storeTagged([("T.JPG", withTime), ("U.JPG", without)], exif: exif, in: folder)
        let tags = try await ExifTool.tags(receipt.files.map(\.location))
        let timed = tags[receipt.files[0].location]?["ExifIFD:DateTimeOriginal"]
        let untimed = tags[receipt.files[1].location]?["ExifIFD:DateTimeOriginal"]
        switch policy {
        case "ifMissing": #expect(timed == "2020:01:02 03:04:05"); #expect(untimed?.hasPrefix("2026:") == true)
        case "always": #expect(timed?.hasPrefix("2026:") == true); #expect(untimed?.hasPrefix("2026:") == true)
        default: #expect(timed == "2020:01:02 03:04:05"); #expect(untimed == nil)
        }
    }

    @Test("a studio location is written where the camera has none, and the camera's is kept")
    func gps() async throws {
        let folder = TemporaryDirectory("exif-gps")
        let plain = try await cameraJPEG(["-Make=TestCam"], in: folder, name: "plain.jpg")
        let located = try await cameraJPEG(["-GPSLatitude=10.5", "-GPSLatitudeRef=S", "-GPSLongitude=20.25", "-GPSLongitudeRef=W"],
                                     in: folder, name: "located.jpg")
        var exif = studioExif
        exif["gps"] = ["latitude": 52.5208, "longitude": -13.4094, "altitude": 34.5]
        let receipt = try await storeTagged([("P.JPG", plain), ("L.JPG", located)], exif: exif, in: folder)
        let tags = try await ExifTool.tags(receipt.files.map(\.location), extra: ["-n"])
        let p = try #require(tags[receipt.files[0].location]), l = try #require(tags[receipt.files[1].location])
        #expect(abs((Double(p["GPS:GPSLatitude"] ?? "") ?? 0) - 52.5208) < 0.0001)
        #expect(abs((Double(p["GPS:GPSLongitude"] ?? "") ?? 0) - 13.4094) < 0.0001 && p["GPS:GPSLongitudeRef"] == "W")
        #expect(p["GPS:GPSAltitude"] == "34.5")
        #expect(l["GPS:GPSLatitude"] == "10.5" && l["GPS:GPSLatitudeRef"] == "S")
        try await expectCameraMetadataIntact(original: folder.file("plain.jpg"), tagged: receipt.files[0].location)
    }

    @Test("our tag numbers agree with libexif's tag table")
    func tagTable() {
        let expected: [(String, UInt16)] = [
            ("Artist", TagNumber.artist), ("Copyright", TagNumber.copyright), ("ImageDescription", TagNumber.imageDescription),
            ("Software", TagNumber.software), ("UserComment", TagNumber.userComment), ("ImageUniqueID", TagNumber.imageUniqueID),
            ("DateTimeOriginal", TagNumber.dateTimeOriginal), ("SubSecTimeOriginal", TagNumber.subSecTimeOriginal),
            ("OffsetTimeOriginal", TagNumber.offsetTimeOriginal), ("XPKeywords", TagNumber.xpKeywords),
            ("XPAuthor", TagNumber.xpAuthor), ("XPComment", TagNumber.xpComment), ("XPTitle", TagNumber.xpTitle),
        ]
        for (name, number) in expected {
            #expect(LibExif.tagNumber(named: name) == number, "\(name)")
        }
    }

    @Test("exif: config mistakes name the problem and list the valid tags")
    func configErrors() throws {
        func error(_ exif: [String: Any]) -> String? {
            do {
                // As the registry makes a plugin: the factory, then every mistake it recorded.
                let options = try PluginOptions(configNode(["exif": exif]), owner: "sink 'files'")
                _ = try FilesSink.Options(options)
                try options.rejectUnknownKeys()
                return nil
            } catch { return "\(error)" }
        }
        #expect(error(["Artis": "x"])?.contains("unknown EXIF tag 'Artis'; did you mean 'Artist'?; valid tags: Artist, Copyright") == true)
        #expect(error(["ImageUniqueID": "abc"])?.contains("must be 32 hex digits") == true)
        #expect(error(["gps": ["latitude": 52]])?.contains("needs both 'latitude' and 'longitude'") == true)
        #expect(error(["gps": ["latitude": 99, "longitude": 1]])?.contains("between -90.0 and 90.0") == true)
        #expect(error(["Artist": "{sesion}"])?.contains("did you mean '{session}'") == true)
        #expect(error(["captureTime": "sometimes"])?.contains("must be one of ifMissing, always, never") == true)
        #expect(error(["Artist": "x"]) == nil)
    }
}
