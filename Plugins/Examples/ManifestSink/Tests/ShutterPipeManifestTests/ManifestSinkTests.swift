import Foundation
import ShutterPipeConformance
import ShutterPipeKit
@testable import ShutterPipeManifest
import Testing

@Suite("manifest sink")
struct ManifestSinkTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("manifest-\(UUID().uuidString)").path

    @Test("passes the conformance kit")
    func conformance() async throws {
        let path = "\(folder)/manifest.jsonl"
        let problems = await Conformance.checkSink({ ManifestSink(path: path, session: "test") },
                                                   failing: { ManifestSink(path: "/proc/manifest.jsonl", session: "test") })
        #expect(problems.isEmpty, "\(problems)")
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 4)  // two RAW+JPEG shots: a line per file
        let ids = lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["shotID"] as? String }
        #expect(ids.count == 4 && Set(ids).count == 2 && ids.allSatisfy { ShotID($0) != nil }, "each line names its shot: \(ids)")
    }

    @Test("SHA-256 matches the FIPS 180-4 test vectors")
    func sha256() {
        #expect(SHA256.hex(Data("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex(Data()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Data("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }
}
