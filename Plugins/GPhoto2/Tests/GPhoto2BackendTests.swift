#if canImport(Glibc)
import Glibc
#endif
import CGPhoto2
import Foundation
@testable import GPhoto2Backend
@testable import GPhoto2Camera
import ShutterPipeFixtures
import ShutterPipeKit
import TestSupport
import Testing

/// A pipeline config: the gphoto2 backend on `camera`, stdin, and a files sink.
func tetherConfig(_ camera: FakeCamera, output: String, backend: String = "", sink: String = "") -> String {
    """
    version: 1
    session: tether
    backend:
      type: gphoto2
      port: \(camera.portSpec)
    \(backend)
    triggers:
      - type: stdin
    sinks:
      - type: files
        directory: \(output)
        filename: "{session}-{seq:04}-{name}.{ext}"
    \(sink)
    coordinator:
      captureTimeout: 30s
      enterTimeout: 30s
    """
}

/// Runs shutterpipe against `camera` with `input` on stdin, HOME set to the camera's.
func runTethered(_ camera: FakeCamera, _ config: String, input: String, in folder: TemporaryDirectory,
                 environment: [String: String] = [:]) async throws -> Outcome {
    let path = try writeConfig(config, in: folder)
    return try await shutterpipe(["run", "--config", path], input: input, in: folder.path,
                                 environment: environment.merging(["HOME": camera.home.path]) { _, home in home }, timeout: .seconds(40))
}

/// The bytes the virtual camera serves for a replayed JPEG: the file with a comment
/// segment naming the shot, right after SOI.
func servedBytes(_ original: Data, shot: Int) -> Data {
    let comment = Array("shutterpipe-fakecam shot \(shot)".utf8)
    var data = original
    data.insert(contentsOf: [0xFF, 0xFE, UInt8((comment.count + 2) >> 8), UInt8((comment.count + 2) & 0xFF)] + comment, at: 2)
    return data
}

@Suite("gphoto2 backend against the virtual camera (real libgphoto2)", .timeLimit(.minutes(2)))
struct GPhoto2BackendTests {
    @Test("several shots in one session download byte-identical to what the camera served, and leave the card")
    func captureAndDownload() async throws {
        let folder = TemporaryDirectory("tether")
        let images = folder.file("images")
        try FileManager.default.createDirectory(atPath: images, withIntermediateDirectories: true)
        let originals = (1...2).map { SyntheticJPEG.make(width: 96, height: 64, shot: $0) }
        for (index, data) in originals.enumerated() { try data.writeTestFile("\(images)/frame\(index).jpg") }
        let camera = try await FakeCamera(["--images", images])
        let outcome = try await runTethered(camera, tetherConfig(camera, output: folder.file("out")),
                                            input: "enter\ncapture\ncapture\ncapture\nexit\n", in: folder)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.lines.count == 5)
        let stored = outcome.lines.filter { $0.hasPrefix("photoSuccess ") }.map { String($0.dropFirst("photoSuccess ".count)) }
        #expect(stored.count == 3, "\(outcome.stdout)\n\(outcome.stderr)")
        for (index, path) in stored.enumerated() {
            let expected = servedBytes(originals[index % 2], shot: index + 1)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == expected, "shot \(index + 1)")
        }
        #expect(stored.map { ($0 as NSString).lastPathComponent } == ["tether-0001-IMG_0001.jpg", "tether-0002-IMG_0002.jpg", "tether-0003-IMG_0003.jpg"])
        #expect(try await camera.filesOnCard().isEmpty)  // deleted after every sink stored them
        #expect(outcome.stderr.contains("opened PTP/IP Camera at \(camera.portSpec), serial SP-0001"))
    }

    @Test("RAW+JPEG: both files of an exposure arrive and share one sequence number")
    func rawPlusJPEG() async throws {
        let folder = TemporaryDirectory("tether-raw")
        let camera = try await FakeCamera(["--raw-plus-jpeg"])
        let outcome = try await runTethered(camera, tetherConfig(camera, output: folder.file("out")), input: "capture\n", in: folder)
        let line = try #require(outcome.lines.first { $0.hasPrefix("photoSuccess") })
        let names = line.split(separator: " ").dropFirst().map { ($0 as NSString).lastPathComponent }
        #expect(Set(names) == ["tether-0001-IMG_0001.jpg", "tether-0001-IMG_0001.cr2"], "\(line)")
        let raw = try #require(line.split(separator: " ").first { $0.hasSuffix(".cr2") })
        #expect(try Data(contentsOf: URL(fileURLWithPath: String(raw))).prefix(6) == Data("SPRAW1".utf8))
    }

    @Test("the virtual camera's settings read as docs/virtual-camera.md says, and imagequality set by the name it shows takes RAW+JPEG")
    func settingNamesAsDocumented() async throws {
        let folder = TemporaryDirectory("tether-setting-names")
        let camera = try await FakeCamera()
        let docs = try String(contentsOfFile: "\(repositoryRoot)/docs/virtual-camera.md", encoding: .utf8)
        let quality = try await camera.gphoto2(["--get-config", "imagequality"]).text
        for shown in ["Unknown value 0000", "Unknown value 0001"] {
            #expect(quality.contains("Choice: \(shown == "Unknown value 0000" ? 0 : 1) \(shown)") && docs.contains("`\(shown)`"), "\(quality)")
        }
        for (setting, shown) in [("iso", "Current: 100"), ("f-number", "Current: f/5.6"), ("batterylevel", "Current: 87%")] {
            #expect(try await camera.gphoto2(["--get-config", setting]).text.contains(shown))
        }
        #expect(docs.contains("`100` … `3200`") && docs.contains("`87%`"))
        let raw = tetherConfig(camera, output: folder.file("out"), backend: "  settings:\n    imagequality: \"Unknown value 0001\"")
        let outcome = try await runTethered(camera, raw, input: "capture\n", in: folder)
        let stored = folder.names("out").filter { !$0.hasPrefix(".") }
        #expect(stored.contains { $0.hasSuffix(".CR2") || $0.hasSuffix(".cr2") } && stored.contains { $0.lowercased().hasSuffix(".jpg") },
                "\(stored) \(outcome.stdout) \(outcome.stderr)")
    }

    @Test("settings are applied, read back on the camera, and a value the camera does not offer is refused with its choices")
    func settings() async throws {
        let folder = TemporaryDirectory("tether-settings")
        let camera = try await FakeCamera()
        let good = tetherConfig(camera, output: folder.file("out"), backend: """
          settings:
            iso: 400
            shutterspeed: 1/250
            aperture: "f/11"
        """)
        let outcome = try await runTethered(camera, good, input: "enter\nexit\n", in: folder)
        #expect(outcome.lines == ["enteredPhotoMode", "exitedOrUnableToEnter"], "\(outcome.stderr)")
        #expect(try await camera.gphoto2(["--get-config", "iso"]).text.contains("Current: 400"))
        #expect(try await camera.gphoto2(["--get-config", "f-number"]).text.contains("Current: f/11"))
        #expect(try await camera.gphoto2(["--get-config", "shutterspeed"]).text.contains("Current: 0.0040s"))

        let bad = tetherConfig(camera, output: folder.file("out"), backend: "  settings:\n    iso: 150")
        let refused = try await runTethered(camera, bad, input: "enter\n", in: folder)
        #expect(refused.lines.first == "exitedOrUnableToEnter invalidConfiguration: iso '150' is not offered by PTP/IP Camera; choices: 100, 200, 400, 800, 1600, 3200 (use one of the choices in 'settings')")
        let unknown = tetherConfig(camera, output: folder.file("out"), backend: "  settings:\n    whitebalance: daylight")
        #expect(try await runTethered(camera, unknown, input: "enter\n", in: folder).lines.first?
            .hasPrefix("exitedOrUnableToEnter invalidConfiguration: PTP/IP Camera has no setting 'whitebalance'") == true)
    }

    @Test("a shot taken with the camera's own button is downloaded and stored")
    func cameraButton() async throws {
        let folder = TemporaryDirectory("tether-button")
        let camera = try await FakeCamera()
        let path = try writeConfig(tetherConfig(camera, output: folder.file("out")), in: folder)
        let running = try await RunningProcess.start(["run", "--config", path], in: folder.path, environment: ["HOME": camera.home.path])
        running.send("enter\n")
        #expect(await eventually { running.stdoutSoFar.contains("enteredPhotoMode") })
        camera.pressButton()
        #expect(await eventually { folder.names("out").contains { $0.hasSuffix(".jpg") } })
        running.closeInput()
        let outcome = await running.wait()
        #expect(outcome.stderr.contains("shot taken on the camera: IMG_0001.JPG"), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("camera shot #1 → photoSuccess"))
        #expect(try await camera.filesOnCard().isEmpty)
    }

    @Test("keepOnCamera leaves the shots on the card")
    func keepOnCamera() async throws {
        let folder = TemporaryDirectory("tether-keep")
        let camera = try await FakeCamera()
        let outcome = try await runTethered(camera, tetherConfig(camera, output: folder.file("out"), backend: "  keepOnCamera: true"),
                                            input: "capture\ncapture\n", in: folder)
        #expect(outcome.lines.filter { $0.hasPrefix("photoSuccess") }.count == 2)
        #expect(try await camera.filesOnCard() == ["IMG_0001.JPG", "IMG_0002.JPG"])
    }

    @Test("a pipeline whose only sink is a command hook leaves every shot on the card, and validate says why")
    func hookOnlyKeepsShots() async throws {
        let folder = TemporaryDirectory("tether-hook-only")
        let camera = try await FakeCamera()
        let hook = folder.file("hook.sh")
        try "#!/bin/sh\necho \"$ACTION\" >> \(folder.file("actions"))\n".writeTestFile(hook)
        chmod(hook, 0o755)
        let config = try writeConfig("""
        version: 1
        session: hooked
        backend:
          type: gphoto2
          port: \(camera.portSpec)
        triggers:
          - type: stdin
        sinks:
          - type: command
            command: [\(hook)]
        coordinator:
          captureTimeout: 30s
          enterTimeout: 30s
        """, in: folder)
        let validated = try await shutterpipe(["validate", config], in: folder.path)
        #expect(validated.status == 0)
        #expect(validated.stdout.contains("\(config): note: no sink keeps the photos (command only acts on them): every shot stays on the camera's card; add a files sink to keep them on disk"),
                "\(validated.stdout)")
        // Shot by shot, as a photographer would: each capture waits for its answer.
        let running = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        for shot in 1...3 {
            running.send("capture\n")
            #expect(await eventually { running.stdoutSoFar.components(separatedBy: "photoSuccess").count - 1 == shot }, "shot \(shot): \(running.stderrSoFar)")
        }
        running.closeInput()
        let outcome = await running.wait(timeout: .seconds(40))
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("no sink in this pipeline keeps the photos (command): every shot stays on the camera's card"))
        #expect(try await camera.filesOnCard() == ["IMG_0001.JPG", "IMG_0002.JPG", "IMG_0003.JPG"])
    }

    @Test("a shot a sink could not store stays on the card")
    func sinkFailureKeepsShot() async throws {
        let folder = TemporaryDirectory("tether-sinkfail")
        // A folder that passes the check at start but not the shot: the session's folder
        // (templated) is taken by a file.
        try Data().writeTestFile(folder.file("tether"))
        let camera = try await FakeCamera()
        let outcome = try await runTethered(camera, tetherConfig(camera, output: "\"\(folder.path)/{session}\""), input: "capture\n", in: folder)
        #expect(outcome.lines.first?.hasPrefix("photoFailed storageUnavailable:") == true, "\(outcome.stdout)")
        #expect(try await camera.filesOnCard() == ["IMG_0001.JPG"])
    }

    @Test("a full card answers photoFailed with the storage cause")
    func storeFull() async throws {
        let folder = TemporaryDirectory("tether-full")
        let camera = try await FakeCamera(["--store-full-after", "1"])
        let outcome = try await runTethered(camera, tetherConfig(camera, output: folder.file("out")), input: "capture\ncapture\n", in: folder)
        #expect(outcome.lines.first?.hasPrefix("photoSuccess") == true, "\(outcome.stdout)\n\(outcome.stderr)")
        #expect(outcome.lines.dropFirst().first?.hasPrefix("photoFailed storageUnavailable: the camera's card is full") == true, "\(outcome.stdout)")
    }

    @Test("a connection dropped mid-shoot fails that shot with cameraFailure, then the backend reconnects by itself")
    func droppedConnection() async throws {
        let folder = TemporaryDirectory("tether-drop")
        let camera = try await FakeCamera(["--drop-after", "1"])
        let outcome = try await runTethered(camera, tetherConfig(camera, output: folder.file("out")),
                                            input: "enter\ncapture\ncapture\ncapture\ncapture\n", in: folder)
        let states = outcome.lines.map { String($0.split(separator: " ").first ?? "") }
        #expect(states.first == "enteredPhotoMode")
        #expect(states.dropFirst().first == "photoSuccess", "\(outcome.stdout)\n\(outcome.stderr)")
        #expect(outcome.lines.contains { $0.hasPrefix("photoFailed cameraFailure: the camera went away during capture") }, "\(outcome.stdout)")
        #expect(states.dropLast().last == "photoSuccess", "recovered: \(outcome.stdout)\n\(outcome.stderr)")  // then the end-of-input exit
        #expect(outcome.stderr.contains("back at \(camera.portSpec)"), "\(outcome.stderr)")
    }

    @Test("a capture whose events never come times out, and the backend frees libgphoto2 and takes the next shot")
    func lostCaptureEvents() async throws {
        let folder = TemporaryDirectory("tether-lost-events")
        let camera = try await FakeCamera(["--lose-events-of", "2"])
        // 5 s: the shot after the lost one waits for the new worker to open the camera,
        // which on a loaded two-core machine takes two seconds.
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out")).replacingOccurrences(of: "captureTimeout: 30s", with: "captureTimeout: 5s"),
                                     in: folder)
        let running = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        var answers: [String] = []
        // One capture at a time, each after the previous answer, as a photographer would.
        for count in 1...6 {
            running.send("capture\n")
            _ = await eventually(timeout: .seconds(30)) { running.stdoutSoFar.split(separator: "\n").filter { $0.hasPrefix("photo") }.count >= count }
            answers = running.stdoutSoFar.split(separator: "\n").map(String.init).filter { $0.hasPrefix("photo") }
            if count > 2 && answers.last?.hasPrefix("photoSuccess") == true { break }
        }
        running.closeInput()
        let outcome = await running.wait(timeout: .seconds(30))
        #expect(answers.first?.hasPrefix("photoSuccess") == true, "\(answers)")
        #expect(answers.dropFirst().first?.hasPrefix("photoFailed timeout: capture did not finish within 5 s") == true, "\(answers)")
        // Without killing the worker, libgphoto2 stayed in the lost capture and every later one timed out.
        #expect(answers.dropFirst(2).contains { $0.hasPrefix("photoSuccess") }, "\(answers)\n\(outcome.stderr)")
        #expect(outcome.stderr.contains("the camera worker for 'camera' did not answer in time; killed and restarted"), "\(outcome.stderr)")
    }
}
