#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeKit
import TestSupport
import Testing

/// Session labels (`{label}`): set from the socket (`shutterpipe label`) and from stdin
/// lines, in their turn among the shots.
@Suite("session labels: {label} in the next shots' names", .timeLimit(.minutes(2)))
struct LabelTests {
    @Test("lines one at a time: no label, then one from `shutterpipe label`, one from a stdin line, a cleared one and a refused one; each shot named by the label in force when it was asked for")
    func labelsInTurn() async throws {
        let folder = TemporaryDirectory("labels")
        let path = folder.file("s.sock")
        let config = try writeConfig("""
        version: 1
        session: labels
        backend: {type: file-stub, width: 160, height: 120}
        triggers:
          - {type: stdin}
          - {type: socket, path: \(path)}
        sinks:
          - {type: files, directory: \(folder.file("out")), filename: "{label}-{seq:03}.{ext}", exif: {Artist: "Jane Doe"}}
        """, in: folder)
        let session = try await RunningProcess.start(["run", "--config", config, "--no-status"], in: folder.path)
        var answered = 0
        func line(_ text: String) async -> String {
            session.send(text + "\n")
            answered += 1
            let count = answered
            await session.waitForOutput(on: .stdout, "answer \(count) to '\(text.prefix(20))'") { $0.split(separator: "\n").count >= count }
            return session.stdoutSoFar.split(separator: "\n").last.map(String.init) ?? ""
        }
        #expect(await line("capture").hasSuffix("nolabel-001.jpg"))
        #expect(await eventually { connectUnixSocket(path) >= 0 })
        let set = try await shutterpipe(["label", "ORDER-1234", "--socket", path], in: folder.path)
        #expect(set.status == 0 && set.stdout == "label ORDER-1234\n", "\(set.stdout) \(set.stderr)")
        #expect(await line("capture").hasSuffix("ORDER-1234-002.jpg"))
        #expect(await line("label  Class 7B ") == "label Class 7B")
        #expect(await line("capture").hasSuffix("Class 7B-003.jpg"))
        #expect(await line("label") == "label")
        #expect(await line("capture").hasSuffix("nolabel-004.jpg"))
        let refused = await line("label " + String(repeating: "x", count: 300))
        #expect(refused.hasPrefix("labelRefused invalidConfiguration: a label is at most 200 bytes of UTF-8"), "\(refused)")
        #expect(await line("capture").hasSuffix("nolabel-005.jpg"))
        session.signal(SIGTERM)  // the socket trigger keeps a session running after stdin ends
        let outcome = await session.wait(timeout: .seconds(60))
        #expect(outcome.status == 0)
        #expect(outcome.stderr.contains("label 'ORDER-1234' from socket (client") && outcome.stderr.contains("label cleared by stdin (line 5)"), "\(outcome.stderr)")
        #expect(folder.names("out").filter { $0.hasSuffix(".jpg") }.sorted() == ["Class 7B-003.jpg", "ORDER-1234-002.jpg", "nolabel-001.jpg", "nolabel-004.jpg", "nolabel-005.jpg"])
        // In the photo (IPTC's Job Identifier, in XMP), as exiftool reads it; none without a label.
        let tags = try await ExifTool.tags([folder.file("out/ORDER-1234-002.jpg"), folder.file("out/nolabel-001.jpg")])
        #expect(tags[folder.file("out/ORDER-1234-002.jpg")]?["XMP-photoshop:TransmissionReference"] == "ORDER-1234", "\(tags)")
        #expect(tags[folder.file("out/nolabel-001.jpg")]?["XMP-photoshop:TransmissionReference"] == nil)
        // In the catalogue, by which shots can be found.
        let listed = try await shutterpipe(["shots", "--config", config, "--json", "--session-label", "ORDER-1234"], in: folder.path)
        let shots = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(shots.count == 1 && shots.first?["sessionLabel"] as? String == "ORDER-1234" && shots.first?["runNumber"] as? Int == 2, "\(listed.stdout) \(listed.stderr)")
    }
}
