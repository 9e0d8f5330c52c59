#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// How long the virtual camera says each bulb exposure was open, in milliseconds, in order
/// (`bulb: the shutter closed after 1500.505 ms`): the camera's own clock.
func bulbLengths(_ camera: FakeCamera) -> [Double] {
    camera.logText.split(separator: "\n").compactMap { line -> Double? in
        guard let range = line.range(of: "bulb: the shutter closed after ") else { return nil }
        return Double(line[range.upperBound...].prefix { $0.isNumber || $0 == "." })
    }
}

@Suite("bulb: the shutter held open for a planned time (real libgphoto2)", .timeLimit(.minutes(4)))
struct BulbTests {
    @Test("Config/bulb.yaml, 'sequence night' against a camera with bulb: 2 frames, each held open at least the planned 1.5 s on the camera's own clock; each photo's ExposureTime says how long, to the millisecond, and its XMP says it is a bulb frame and of what length; the camera took the open through PTP open capture once libgphoto2's misplaced Fuji 'bulb' was refused")
    func night() async throws {
        let camera = try await FakeCamera(["--bulb"])
        let folder = TemporaryDirectory("bulb-night")
        let run = try await shutterpipe(["run", "--config", "\(repositoryRoot)/Config/bulb.yaml"], input: "sequence night\n", in: folder.path,
                                        environment: ["HOME": camera.home.path, "FAKECAM_PORT": String(camera.port)])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.contains("sequenceDone night: 2 of 2 taken"), "\(run.stdout)")
        let lengths = bulbLengths(camera)
        #expect(lengths.count == 2, "\(camera.logText)")
        // Never short: the close is asked for 1.5 s after the camera answered the open. How
        // close to 1.5 s it lands is measured (docs/benchmarks.md), not judged here.
        #expect(lengths.allSatisfy { $0 >= 1500 && $0 < 1500 + 5000 }, "\(lengths)")
        #expect(run.stderr.contains("bulb: held open") && run.stderr.contains("with 'movie' (asked 1.5 s)"), "\(run.stderr)")
        let stored = folder.file("captures/bulb")
        let names = [1, 2].map { String(format: "%@/bulb-%04d-frame%02d.jpg", stored, $0, $0) }
        let tags = try await ExifTool.tags(names, extra: ["-n"])
        for (name, length) in zip(names, lengths) {
            let exposure = try #require(tags[name]?["ExifIFD:ExposureTime"].flatMap(Double.init), "\(tags[name] ?? [:])")
            #expect(abs(exposure * 1000 - length) <= 0.5 + 1e-6, "\(name): ExposureTime \(exposure) s, the camera says \(length) ms")
            #expect(tags[name]?["XMP-shutterpipe:SequenceKind"] == "bulb" && tags[name]?["XMP-shutterpipe:SequenceValue"] == "1.5 s", "\(tags[name] ?? [:])")
        }
    }

    @Test("an interval of bulbs ('sequence trails' with 3 frames every 2 s, each a 1 s bulb): each opens at start + k·2 s on the camera's clock, never drifting by the exposures, each held at least 1 s; every frame answered")
    func intervalOfBulbs() async throws {
        let folder = TemporaryDirectory("bulb-trails")
        let log = folder.file("capture.log")
        let camera = try await FakeCamera(["--bulb", "--capture-log", log])
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out"))
                                     + "\nsequences:\n  one: {kind: bulb, exposure: 1s}\n  trails: {kind: interval, frames: 3, every: 2s, each: one}\n", in: folder)
        let run = try await shutterpipe(["run", "--config", config], input: "sequence trails\n", in: folder.path, environment: ["HOME": camera.home.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.filter { $0.hasPrefix("photoSuccess") }.count == 3, "\(run.stdout)")
        #expect(run.lines.contains("sequenceDone trails: 3 of 3 taken"), "\(run.stdout)")
        #expect(bulbLengths(camera).count == 3 && bulbLengths(camera).allSatisfy { $0 >= 1000 }, "\(bulbLengths(camera))")
        let opened = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap { UInt64($0) }
        try #require(opened.count == 3, "\(opened)")
        // Frame k at start + k·2 s, the first frame's own delay on either side: a schedule
        // from the end of each exposure would open the third frame 6 s or more after the
        // first, this one at 4 s give or take the machine's load.
        for (k, moment) in opened.enumerated() {
            let since = Double(moment - opened[0]) / 1e9
            #expect(since >= Double(k) * 2 - 1 && since < Double(k) * 2 + 0.9, "frame \(k + 1) opened \(since) s after the first")
        }
    }

    @Test("no bulb where there is none: against a camera without it, the frame fails naming what the camera lacks and the fix, and no shutter opened; against the file stub, the sequence is refused before any frame, naming the backend")
    func withoutBulb() async throws {
        let camera = try await FakeCamera()
        let folder = TemporaryDirectory("bulb-none")
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out")) + "\nsequences:\n  night: {kind: bulb, exposure: 1s}\n", in: folder)
        let run = try await shutterpipe(["run", "--config", config], input: "sequence night\n", in: folder.path, environment: ["HOME": camera.home.path])
        #expect(run.status == 4, "\(run.stderr)")
        #expect(run.lines.contains { $0.hasPrefix("photoFailed invalidConfiguration: this camera has no bulb control that works") }, "\(run.stdout)")
        #expect(run.stderr.contains("bulb works on bodies libgphoto2 offers 'bulb' for"), "\(run.stderr)")
        #expect(run.lines.contains("sequenceDone night: 0 of 1 taken, 1 failed"), "\(run.stdout)")
        #expect(!camera.logText.contains("bulb: the shutter is open"), "\(camera.logText)")

        let stub = try writeConfig("""
        version: 1
        backend: {type: file-stub}
        triggers: [{type: stdin}]
        sinks: [{type: files, directory: \(folder.file("stub"))}]
        sequences:
          night: {kind: bulb, exposure: 1s}
        """, in: folder, name: "stub.yaml")
        let refused = try await shutterpipe(["run", "--config", stub], input: "sequence night\n", in: folder.path)
        #expect(refused.lines.contains { $0.hasPrefix("sequenceRefused") && $0.contains("holds the shutter open (bulb), but the backend") }, "\(refused.stdout)\n\(refused.stderr)")
    }
}
