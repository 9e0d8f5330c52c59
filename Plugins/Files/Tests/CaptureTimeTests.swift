@testable import FilesSink
import Foundation
import ShutterPipeKit
import TestSupport
import Testing

@Suite("files sink: {capturetime}, the camera's own time of the exposure")
struct CaptureTimeTests {
    @Test("a RAW+JPEG pair is named by its JPEG's DateTimeOriginal (as exiftool wrote it), both files alike; a photo without one by the session's capture time; a clock never set does not count")
    func namesByCameraTime() async throws {
        let folder = TemporaryDirectory("capturetime")
        let tagged = try await cameraJPEG(["-DateTimeOriginal=2025:06:01 10:20:30"], in: folder, name: "tagged.jpg")
        let unset = try await cameraJPEG(["-DateTimeOriginal=0000:00:00 00:00:00"], in: folder, name: "unset.jpg")
        let plain = try await cameraJPEG(in: folder, name: "plain.jpg")
        let store = try sink(folder, directory: folder.file("out"), filename: "{capturetime}-{seq:03}.{ext}")
        let pair = try await store.store(CapturedPhoto(files: [CapturedFile(name: "DSC_0001.NEF", data: Data("raw".utf8)),
                                                            CapturedFile(name: "DSC_0001.JPG", data: tagged)], camera: "Nikon D750"), context: shot(1))
        #expect(pair.files.map { ($0.location as NSString).lastPathComponent } == ["20250601-102030-001.nef", "20250601-102030-001.jpg"])
        // The session's capture time instead, formatted alike (local time, as {date} and {time}).
        let time = Date(timeIntervalSince1970: 1_780_000_000)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        for (index, data) in [unset, plain].enumerated() {
            let receipt = try await store.store(CapturedPhoto(files: [CapturedFile(name: "IMG_\(index).JPG", data: data)], camera: "Nikon D750"),
                                                context: shot(index + 2, time: time))
            #expect((receipt.files.first?.location as NSString?)?.lastPathComponent == "\(formatter.string(from: time))-00\(index + 2).jpg")
        }
        #expect(CameraCaptureTime.fileNameText("2026:12:04 14:30:12") == "20261204-143012")
        #expect(CameraCaptureTime.fileNameText("    :  :     :  :  ") == nil && CameraCaptureTime.fileNameText("2026:12:04") == nil)
    }
}
