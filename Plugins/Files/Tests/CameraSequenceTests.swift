@testable import FilesSink
import Foundation
import ShutterPipeKit
import TestSupport
import Testing

@Suite("files sink: {cameraseq}, each camera's own numbering")
struct CameraSequenceTests {
    @Test("two cameras' shots in one folder, interleaved, each numbered on its own; after a restart each goes on from its own highest name, even with its counter file gone")
    func perCamera() async throws {
        let folder = TemporaryDirectory("cameraseq")
        let out = folder.file("out")
        func names(_ sink: FilesSink, _ cameras: [String], from first: Int) async throws -> [String] {
            var stored: [String] = []
            for (index, camera) in cameras.enumerated() {
                let receipt = try await sink.store(photo(["DSC.JPG"]), context: shot(first + index, camera: camera))
                stored += receipt.files.map { ($0.location as NSString).lastPathComponent }
            }
            return stored
        }
        let template = "{camera}-{cameraseq:03}-{seq}.{ext}"
        let first = try sink(folder, directory: out, filename: template)
        #expect(try await names(first, ["left", "right", "left", "left", "right"], from: 1)
                == ["left-001-1.jpg", "right-001-2.jpg", "left-002-3.jpg", "left-003-4.jpg", "right-002-5.jpg"])
        // A camera name that is no file name is encoded in its counter's file name.
        #expect(try await names(first, ["Cam A/1"], from: 6) == ["Cam A_1-001-6.jpg"])
        let counters = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasPrefix(".shutterpipe-sequence-camera-") }.sorted()
        #expect(counters == [".shutterpipe-sequence-camera-Cam%20A%2F1", ".shutterpipe-sequence-camera-left", ".shutterpipe-sequence-camera-right"], "\(counters)")

        // A restart with the counter files lost: the names are the record.
        for name in counters { try FileManager.default.removeItem(atPath: "\(out)/\(name)") }
        let again = try sink(folder, directory: out, filename: template)
        #expect(try await names(again, ["right", "left"], from: 1) == ["right-003-7.jpg", "left-004-8.jpg"])
        #expect(throws: TemplateError.self) { try PlaceholderTemplate("{cameraseq:99}.jpg") }
    }
}
