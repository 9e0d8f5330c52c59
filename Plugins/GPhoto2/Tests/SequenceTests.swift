#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// The sharpness of each photo in `folder`, in name order: the variance of its Laplacian
/// (Pillow's 3×3 kernel over the grey image), an independent reader of what the lens did.
func sharpness(_ folder: String) async throws -> [(name: String, sharpness: Double)] {
    let script = """
    import glob, json, os, sys
    from PIL import Image, ImageFilter, ImageStat
    out = []
    for path in sorted(glob.glob(os.path.join(sys.argv[1], '*.jpg'))):
        grey = Image.open(path).convert('L')
        laplacian = grey.filter(ImageFilter.Kernel((3, 3), [0, 1, 0, 1, -4, 1, 0, 1, 0], scale=1, offset=128))
        out.append([os.path.basename(path), ImageStat.Stat(laplacian).var[0]])
    print(json.dumps(out))
    """
    let run = try await runProgram(["/usr/bin/python3", "-c", script, folder])
    let rows = try JSONSerialization.jsonObject(with: run.data) as? [[Any]] ?? []
    return rows.compactMap { row in (row.first as? String).flatMap { name in (row.last as? Double).map { (name, $0) } } }
}

/// The values the virtual camera logged for property `code` (`property 0x5009 set to 1800: taken`), in order.
func propertyLog(_ camera: FakeCamera, _ code: String) -> [Int] {
    camera.logText.split(separator: "\n").compactMap { line -> Int? in
        guard let range = line.range(of: "property \(code) set to ") else { return nil }
        return Int(line[range.upperBound...].prefix { $0.isNumber })
    }
}

@Suite("sequences: one tap, a planned series of frames (real libgphoto2)", .timeLimit(.minutes(4)))
struct SequenceTests {
    static let repository = repositoryRoot

    @Test("Config/focus-stack.yaml, 'sequence stack' on stdin: 9 frames, the lens stepped near to far from 1000 to 2600 mm and put back at 800 mm; each frame's place in its XMP; the frame at the sharp distance (1800 mm, the fifth) is the sharpest by a Laplacian, sharpness rising to it and falling after; each frame answered, then the sequence")
    func focusStack() async throws {
        let camera = try await FakeCamera(["--lens"])
        let folder = TemporaryDirectory("sequence-stack")
        let run = try await shutterpipe(["run", "--config", "\(Self.repository)/Config/focus-stack.yaml"], input: "sequence stack\n", in: folder.path,
                                        environment: ["HOME": camera.home.path, "FAKECAM_PORT": String(camera.port)])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.filter { $0.hasPrefix("photoSuccess") }.count == 9, "\(run.stdout)")
        #expect(run.lines.contains("sequenceDone stack: 9 of 9 taken"), "\(run.stdout)")
        #expect(propertyLog(camera, "0x5009") == [1000, 1200, 1400, 1600, 1800, 2000, 2200, 2400, 2600, 800], "\(camera.logText)")
        // Each frame knows its place: XMP, as exiftool reads it.
        let stored = folder.file("captures/focus-stack")
        let names = (1...9).map { String(format: "%@/focus-stack-%04d-frame%02d.jpg", stored, $0, $0) }
        let tags = try await ExifTool.tags(names)
        #expect(names.map { tags[$0]?["XMP-shutterpipe:Frame"] } == (1...9).map { String($0) }, "\(tags[names[0]] ?? [:])")
        #expect(names.map { tags[$0]?["XMP-shutterpipe:SequenceValue"] } == stride(from: 1000, through: 2600, by: 200).map { "\($0) mm" })
        #expect(Set(names.map { tags[$0]?["XMP-shutterpipe:SequenceKind"] }) == ["focus stack"] && Set(names.map { tags[$0]?["XMP-shutterpipe:Frames"] }) == ["9"])
        let frames = try await sharpness(stored)
        #expect(frames.map(\.name) == (1...9).map { String(format: "focus-stack-%04d-frame%02d.jpg", $0, $0) })
        let values = frames.map(\.sharpness)
        try #require(values.count == 9)
        #expect(values.firstIndex(of: values.max()!) == 4, "the fifth frame (1800 mm) is the sharpest: \(values)")
        #expect(zip(values.prefix(5), values.prefix(5).dropFirst()).allSatisfy { $0 < $1 } && zip(values.suffix(5), values.suffix(5).dropFirst()).allSatisfy { $0 > $1 },
                "the sweep passes the sharp distance once: \(values)")
    }

    @Test("Config/bracket.yaml, 'sequence bracket': 0, -1 and +1 EV of shutter speed around 1/125 (1/125, 1/250, and 1/30, the camera's next slower speed), each frame exposed so (the camera's EXIF and record in the photo), named with its offset and carrying it in XMP, and 1/125 put back")
    func bracket() async throws {
        let camera = try await FakeCamera()
        let folder = TemporaryDirectory("sequence-bracket")
        let run = try await shutterpipe(["run", "--config", "\(Self.repository)/Config/bracket.yaml"], input: "sequence bracket\n", in: folder.path,
                                        environment: ["HOME": camera.home.path, "FAKECAM_PORT": String(camera.port)])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.contains("sequenceDone bracket: 3 of 3 taken"), "\(run.stdout)")
        let exposures = try await CameraSettingsTests.exposures(folder.file("captures/bracket"))
        #expect(exposures == ["bracket-0001-ev0.jpg": "iso 100 f/5.6 1/125 s", "bracket-0002-ev-1.jpg": "iso 100 f/5.6 1/250 s",
                              "bracket-0003-ev+2.1.jpg": "iso 100 f/5.6 1/30 s"], "\(exposures)")
        #expect(propertyLog(camera, "0x500d").last == 80 || propertyLog(camera, "0x500D").last == 80, "1/125 put back: \(camera.logText)")
        // The stepped exposure in each frame's EXIF, as the camera wrote it and exiftool reads it.
        let stored = folder.file("captures/bracket")
        let names = ["bracket-0001-ev0.jpg", "bracket-0002-ev-1.jpg", "bracket-0003-ev+2.1.jpg"].map { "\(stored)/\($0)" }
        let tags = try await ExifTool.tags(names, extra: ["-n"])
        #expect(names.map { tags[$0]?["ExifIFD:ExposureTime"].map { String($0.prefix(6)) } } == ["0.008", "0.004", "0.0333"], "\(names.map { tags[$0] ?? [:] })")
        #expect(names.map { tags[$0]?["XMP-shutterpipe:ExposureOffset"] } == ["0.0", "-1.0", "2.06"], "\(names.map { tags[$0] ?? [:] })")
    }

    @Test("rule 17: an exit while a focus stack's third frame is held at the camera cancels it there: three frames taken and answered, six cancelled, the lens back where it was found, and the exit answered after")
    func cancelled() async throws {
        let folder = TemporaryDirectory("sequence-cancel")
        let gate = folder.file("gate")
        try "1\n2\n".writeTestFile(gate)
        let camera = try await FakeCamera(["--lens", "--gate", gate])
        let session = try await RunningProcess.start(["run", "--config", "\(Self.repository)/Config/focus-stack.yaml", "--verbose"], in: folder.path,
                                         environment: ["HOME": camera.home.path, "FAKECAM_PORT": String(camera.port)])
        _ = session.send("sequence stack\n")
        #expect(await camera.waitForLog("capture 3 waits at the gate"))
        _ = session.send("exit\n")
        await session.waitForOutput(on: .stderr, "the exit received") { $0.contains("exit from stdin received") }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: gate))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("3\n".utf8))  // the third line releases capture 3
        try handle.close()
        await session.waitForOutput(on: .stdout, "the sequence's answer") { $0.contains("sequenceCancelled") }
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(60))
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let lines = outcome.stdout.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("photoSuccess") }.count == 3, "\(outcome.stdout)")
        #expect(lines.contains("sequenceCancelled stack: 3 of 9 taken, 6 cancelled (exit from stdin)"), "\(outcome.stdout)")
        #expect(lines.last == "exitedOrUnableToEnter", "\(outcome.stdout)")
        #expect(propertyLog(camera, "0x5009") == [1000, 1200, 1400, 800], "\(camera.logText)")
    }

    @Test("an interval outlives a camera drop: while the camera is away its frames fail at once, said, and the interval keeps its beat; once the camera is back the next frames are taken; an exit then cancels the rest between frames; every frame is answered, counted once, and each taken one is on disk")
    func intervalThroughDrop() async throws {
        let home = TemporaryDirectory("lapse-home")
        let first = try await FakeCamera(home: home)
        let folder = TemporaryDirectory("lapse-drop")
        let out = folder.file("out")
        let config = try writeConfig(tetherConfig(first, output: out) + "\nsequences:\n  lapse: {kind: interval, frames: 200, every: 1s}\n", in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": home.path])
        @Sendable func count(_ prefix: String) -> Int { session.stdoutSoFar.split(separator: "\n").filter { $0.hasPrefix(prefix) }.count }
        session.send("sequence lapse\n")
        #expect(await eventually(timeout: .seconds(90)) { count("photoSuccess") >= 2 }, "\(session.stdoutSoFar)\n\(session.stderrSoFar.suffix(2000))")
        // Unplugged mid-interval: the frames while it is away fail, and the interval goes on.
        await first.stop()
        await session.waitForOutput("camera connection lost")
        #expect(await eventually(timeout: .seconds(90)) { count("photoFailed") >= 1 }, "\(session.stdoutSoFar)")
        let second = try await FakeCamera(port: first.port, home: home)
        await session.waitForOutput("back at \(second.portSpec)")
        let takenBefore = count("photoSuccess")
        #expect(await eventually(timeout: .seconds(90)) { count("photoSuccess") > takenBefore }, "no frame after the camera came back: \(session.stdoutSoFar)\n\(session.stderrSoFar.suffix(2000))")
        session.send("exit\n")
        await session.waitForOutput(on: .stdout, "the sequence's answer") { $0.contains("sequenceCancelled lapse") }
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(60))
        #expect(outcome.status == 4, "the frames while the camera was away failed (exit status 4, events failed): \(outcome.stderr.suffix(2000))")
        let lines = outcome.stdout.split(separator: "\n").map(String.init)
        let taken = lines.filter { $0.hasPrefix("photoSuccess") }.count, failed = lines.filter { $0.hasPrefix("photoFailed") }
        #expect(failed.allSatisfy { $0.hasPrefix("photoFailed cameraFailure") }, "\(failed)")
        let summary = try #require(lines.first { $0.hasPrefix("sequenceCancelled lapse: ") }, "\(outcome.stdout)")
        func number(_ word: String) -> Int { summary.firstMatch(of: try! Regex<(Substring, Substring)>("(\\d+) \(word)")).flatMap { Int($0.1) } ?? 0 }
        #expect(summary.hasPrefix("sequenceCancelled lapse: \(taken) of 200 taken, \(failed.count) failed"), "\(summary)")
        let takenSaid = Int(summary.dropFirst("sequenceCancelled lapse: ".count).prefix { $0.isNumber }) ?? -1
        #expect(takenSaid + number("failed") + number("skipped") + number("cancelled") == 200, "\(summary)")
        #expect(summary.hasSuffix("(exit from stdin)"), "\(summary)")
        #expect(taken >= 3 && failed.count >= 1, "\(outcome.stdout)")
        let stored = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.lowercased().hasSuffix(".jpg") }
        #expect(stored.count == taken, "\(stored.sorted()) for \(taken) frames taken")
        #expect(lines.last == "exitedOrUnableToEnter", "\(outcome.stdout)")
    }

    @Test("a sequence the config does not plan is refused with the names it does; one on a backend without settings is refused with the fix; the session goes on")
    func refused() async throws {
        let camera = try await FakeCamera(["--lens"])
        let folder = TemporaryDirectory("sequence-refused")
        let run = try await shutterpipe(["run", "--config", "\(Self.repository)/Config/focus-stack.yaml"], input: "sequence nope\ncapture\n", in: folder.path,
                                        environment: ["HOME": camera.home.path, "FAKECAM_PORT": String(camera.port)])
        #expect(run.lines.first == "sequenceRefused invalidConfiguration: no sequence 'nope' in the config (the sequences are: stack)", "\(run.stdout)")
        #expect(run.lines.dropFirst().first?.hasPrefix("photoSuccess") == true, "\(run.stdout)")
        let stub = try writeConfig("""
        version: 1
        backend: {type: file-stub, width: 64, height: 48}
        triggers: [{type: stdin}]
        sinks: [{type: files, directory: \(folder.file("stub"))}]
        sequences:
          stack: {kind: focus-stack, frames: 3}
          lapse: {kind: interval, frames: 3, every: 500ms}
        """, in: folder)
        let stubRun = try await shutterpipe(["run", "--config", stub], input: "sequence stack\nsequence lapse\n", in: folder.path)
        #expect(stubRun.lines.first?.hasPrefix("sequenceRefused invalidConfiguration: a focus stack steps 'focusdistance', but the backend") == true, "\(stubRun.stdout)")
        // An interval steps no setting: any backend runs it. Each frame is taken, or (on a
        // machine too busy to fire it within its period) skipped and said: never lost.
        let taken = stubRun.lines.filter { $0.hasPrefix("photoSuccess") }.count
        let done = stubRun.lines.first { $0.hasPrefix("sequenceDone lapse: ") } ?? ""
        let skipped = done.firstMatch(of: #/, (\d+) skipped/#).flatMap { Int($0.1) } ?? 0
        #expect(done.hasPrefix("sequenceDone lapse: \(taken) of 3 taken") && taken + skipped == 3 && taken >= 1, "\(stubRun.stdout)")
    }

    @Test("{\"sequence\":\"stack\"} on the socket: the client gets a reply per frame (photoSuccess, its file named with the frame) and then the sequence's, with the same id")
    func overSocket() async throws {
        let camera = try await FakeCamera(["--lens"])
        let folder = TemporaryDirectory("sequence-socket")
        let socket = folder.file("s.sock")
        let config = try writeConfig("""
        version: 1
        backend: {type: gphoto2, port: "\(camera.portSpec)"}
        triggers: [{type: socket, path: \(socket)}]
        sinks: [{type: files, directory: \(folder.file("out")), filename: "{sequence}-{frame:02}.{ext}"}]
        sequences:
          stack: {kind: focus-stack, frames: 4, from: 1600, step: 2, settle: 0s}
        """, in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        let client = try await SocketLines(path: socket)
        #expect(await client.send("{\"sequence\":\"stack\",\"id\":7}\n"))
        let replies = await client.replies(5)
        try #require(replies.count == 5, "\(client.lines)")
        #expect(replies.prefix(4).allSatisfy { $0["state"] as? String == "photoSuccess" && $0["id"] as? Int == 7 }, "\(replies)")
        #expect(replies.prefix(4).compactMap { ($0["files"] as? [String])?.first.map { ($0 as NSString).lastPathComponent } } == ["stack-01.jpg", "stack-02.jpg", "stack-03.jpg", "stack-04.jpg"])
        #expect(replies.last?["event"] as? String == "sequence" && replies.last?["summary"] as? String == "sequenceDone stack: 4 of 4 taken" && replies.last?["id"] as? Int == 7, "\(replies)")
        #expect(propertyLog(camera, "0x5009") == [1600, 1700, 1800, 1900, 800], "\(camera.logText)")
        client.close()
        session.signal(SIGTERM)
        #expect(await session.wait(timeout: .seconds(60)).status == 0)
    }

    @Test("a spin of 4: a frame, then the step (a program told the next angle), 4 times; the frames named by angle; a step that fails stops the spin there, said with its own words, and the frames before it stay")
    func spin() async throws {
        let folder = TemporaryDirectory("sequence-spin")
        let turns = folder.file("turns")
        let config = try writeConfig("""
        version: 1
        backend: {type: file-stub, width: 64, height: 48}
        triggers: [{type: stdin}]
        sinks: [{type: files, directory: \(folder.file("out")), filename: "{sequence}-{angle}.{ext}"}]
        sequences:
          spin:
            kind: spin
            frames: 4
            command: [/bin/sh, -c, 'echo "$SHUTTERPIPE_FRAME/$SHUTTERPIPE_FRAMES at $SHUTTERPIPE_ANGLE" >> \(turns)']
          jammed:
            kind: spin
            frames: 4
            command: [/bin/sh, -c, 'echo "table jammed" >&2; exit 3']
        """, in: folder)
        let run = try await shutterpipe(["run", "--config", config], input: "sequence spin\nsequence jammed\n", in: folder.path)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.contains("sequenceDone spin: 4 of 4 taken"), "\(run.stdout)")
        #expect(try String(contentsOfFile: turns, encoding: .utf8) == "2/4 at 90\n3/4 at 180\n4/4 at 270\n")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.file("out")).filter { $0.hasSuffix(".jpg") }.sorted()
        #expect(names.filter { $0.hasPrefix("spin-") } == ["spin-0.jpg", "spin-180.jpg", "spin-270.jpg", "spin-90.jpg"])
        let jammed = run.lines.first { $0.hasPrefix("sequenceFailed jammed") } ?? ""
        #expect(jammed.hasPrefix("sequenceFailed jammed: 1 of 4 taken, 3 cancelled (the step before frame 2 ") && jammed.hasSuffix("failed: exited with 3: table jammed)"), "\(run.stdout)")
    }

    @Test("a plan with an unknown kind is said at validate, with its place in the file and the kind meant")
    func configMistakes() async throws {
        let folder = TemporaryDirectory("sequence-config")
        let config = try writeConfig("""
        version: 1
        backend: {type: file-stub}
        triggers: [{type: stdin}]
        sinks: [{type: files, directory: \(folder.file("out"))}]
        sequences:
          stack: {kind: focus-stak, frames: 9}
        """, in: folder)
        let checked = try await shutterpipe(["validate", config], in: folder.path)
        #expect(checked.status != 0)
        #expect(checked.stderr.contains("focus-stak") && checked.stderr.contains("focus-stack") && checked.stderr.contains(":6:"), "\(checked.stderr)")
    }
}
