import Foundation
import ShutterPipeKit
import TestSupport
import Testing

/// Steps combine (issue 45): a plan shot at each frame of another (`each:`), on the
/// virtual camera through libgphoto2.
@Suite("sequences: a bracket at each angle of a spin (real libgphoto2)", .timeLimit(.minutes(3)))
struct CombinedSequenceTests {
    @Test("a spin of 3 with a bracket of 3 at each angle: 9 frames, each exposed as its place says (the camera's record in the photo), named by angle and EV; the table turned twice, between the angles, told the next angle; the shutter put back to 1/125 between the angles and at the end; the catalogue holds the 9 as one run of 'spin of brackets'")
    func bracketAtEachAngle() async throws {
        let camera = try await FakeCamera()
        let folder = TemporaryDirectory("sequence-combined")
        let turns = folder.file("turns")
        let config = try writeConfig("""
        version: 1
        session: products
        backend:
          type: gphoto2
          port: "\(camera.portSpec)"
          settings: {shutterspeed: 1/125}
        triggers: [{type: stdin}]
        sinks: [{type: files, directory: \(folder.file("out")), filename: "{sequence}-{angle}-ev{ev}.{ext}"}]
        sequences:
          hdr: {kind: bracket, frames: 3, setting: shutterspeed}
          turn:
            kind: spin
            frames: 3
            command: [/bin/sh, -c, 'echo "$SHUTTERPIPE_ANGLE" >> \(turns)']
            each: hdr
        """, in: folder)
        let run = try await shutterpipe(["run", "--config", config], input: "sequence turn\n", in: folder.path, environment: ["HOME": camera.home.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.filter { $0.hasPrefix("photoSuccess") }.count == 9 && run.lines.contains("sequenceDone turn: 9 of 9 taken"), "\(run.stdout)")
        #expect(run.stderr.contains("sequence 'turn' from stdin (line 1): a spin of 3 frame(s) with a bracket of 3 ('hdr') at each, 9 in all, stepping shutterspeed"), "\(run.stderr)")
        let exposures = try await CameraSettingsTests.exposures(folder.file("out"))
        var expected: [String: String] = [:]
        for angle in ["0", "120", "240"] {
            expected["turn-\(angle)-ev0.jpg"] = "iso 100 f/5.6 1/125 s"
            expected["turn-\(angle)-ev-1.jpg"] = "iso 100 f/5.6 1/250 s"
            expected["turn-\(angle)-ev+2.1.jpg"] = "iso 100 f/5.6 1/30 s"
        }
        #expect(exposures == expected, "\(exposures)")
        #expect((try? String(contentsOfFile: turns, encoding: .utf8)) == "120\n240\n")
        // 1/125 (80 in the camera's units) before each angle's bracket is done again, and at the end.
        let shutter = propertyLog(camera, "0x500d") + propertyLog(camera, "0x500D")
        #expect(shutter.last == 80 && shutter.filter { $0 == 80 }.count >= 3, "\(camera.logText)")

        let listed = try await shutterpipe(["shots", "--sequence", "turn", "--json", "--config", config], in: folder.path)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let shots = try decoder.decode([CatalogueShot].self, from: Data(listed.stdout.utf8)).sorted { $0.id < $1.id }
        let places = shots.compactMap(\.sequence)
        #expect(places.count == 9 && places.allSatisfy { $0.run == 1 && $0.count == 9 && $0.kind == "spin of brackets" && $0.setting == "angle" }, "\(places)")
        #expect(places.map(\.index) == Array(1...9) && places.map(\.value) == ["0", "0", "0", "120", "120", "120", "240", "240", "240"], "\(places)")
        #expect(places.map(\.ev) == [0, -1, 2.06, 0, -1, 2.06, 0, -1, 2.06].map(Optional.some), "\(places.map(\.ev))")
    }

    @Test("'each' naming no sequence, an interval, or a plan stepping the same setting, and a bulb without its exposure, of one too long, or with an 'each', are config errors at their line, with the names there are")
    func mistakes() async throws {
        let folder = TemporaryDirectory("sequence-combined-mistakes")
        let cases: [(String, String)] = [
            ("turn: {kind: spin, frames: 3, command: [/bin/true], each: hdrr}", "sequence 'turn': 'each' names no other sequence ('hdrr'); the sequences are: hdr, lapse"),
            ("turn: {kind: spin, frames: 3, command: [/bin/true], each: lapse}", "sequence 'turn': 'each' must name a bracket, a focus stack or a bulb that has no 'each' of its own; 'lapse' is an interval"),
            ("turn: {kind: bracket, frames: 3, each: hdr}", "sequence 'turn': it and 'hdr' both step 'shutterspeed'"),
            ("night: {kind: bulb, frames: 3}", "'exposure' is required: how long the shutter stays open"),
            ("night: {kind: bulb, exposure: 30s, each: hdr}", "a bulb takes no 'each': an interval or a spin can shoot a bulb at each of its frames (each: night)"),
            ("night: {kind: bulb, exposure: 13h}", "'exposure' must be between 1ms and 12h"),
        ]
        for (line, message) in cases {
            let config = try writeConfig("""
            version: 1
            backend: {type: file-stub}
            triggers: [{type: stdin}]
            sinks: [{type: files, directory: \(folder.file("out"))}]
            sequences:
              hdr: {kind: bracket, frames: 3}
              lapse: {kind: interval, frames: 3}
              \(line)
            """, in: folder)
            let checked = try await shutterpipe(["validate", config], in: folder.path)
            #expect(checked.status != 0 && checked.stderr.contains("studio.yaml:8:") && checked.stderr.contains(message), "\(line): \(checked.stderr)")
        }
    }
}
