#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeKit
import Testing
import TestSupport

/// A session on `cameras` (one: the single-camera keys; several: `cameras:` named A, B…)
/// with ISO 200, 1/125 and f/8 from the config, a stdin and a socket trigger.
func settingsConfig(_ cameras: [FakeCamera], output: String, socket: String) -> String {
    let backend = cameras.count == 1 ? "  port: \(cameras[0].portSpec)\n  settings: {iso: 200, shutterspeed: 1/125, aperture: 8}" :
        "  cameras:\n" + cameras.enumerated().map { index, camera in
            "    - {name: \(String(UnicodeScalar(UInt8(65 + index)))), port: \"\(camera.portSpec)\", settings: {iso: 200}}"
        }.joined(separator: "\n")
    return """
    version: 1
    session: set
    backend:
      type: gphoto2
    \(backend)
    triggers:
      - type: stdin
      - type: socket
        path: \(socket)
    sinks:
      - type: files
        directory: \(output)
        filename: "{session}-{seq:04}-{camera}.{ext}"
    coordinator:
      captureTimeout: 30s
      enterTimeout: 30s
    """
}

@Suite("camera settings: listed, changed between shots, kept across a camera drop (real libgphoto2)", .timeLimit(.minutes(3)))
struct CameraSettingsTests {
    /// What the virtual camera wrote into each stored JPEG: the settings it exposed with,
    /// as exiftool reads them ("iso 400 f/8 1/250 s").
    static func exposures(_ folder: String) async throws -> [String: String] {
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".jpg") }.sorted()
        guard !files.isEmpty else { return [:] }
        let tags = try await ExifTool.tags(files.map { "\(folder)/\($0)" })
        var exposures: [String: String] = [:]
        for (path, fields) in tags {
            let comment = fields["File:Comment"] ?? ""
            guard let start = comment.range(of: "iso "), let end = comment[start.lowerBound...].range(of: " s") else { continue }
            exposures[(path as NSString).lastPathComponent] = String(comment[start.lowerBound..<end.upperBound])
        }
        return exposures
    }

    @Test("camera settings lists every setting with its value, kind and choices, as gphoto2 --get-config reads them; named ones alone; an unknown one is refused with the fix")
    func listing() async throws {
        let camera = try await FakeCamera()
        let folder = TemporaryDirectory("camera-settings")
        let environment = ["HOME": camera.home.path]
        let listed = try await shutterpipe(["camera", "settings", "--port", camera.portSpec], in: folder.path, environment: environment)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.lines.first == "PTP/IP Camera at \(camera.portSpec), serial SP-0001: 21 settings", "\(listed.stdout)")
        let rows = listed.lines.map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        let iso = try #require(rows.first { $0.first == "iso" }, "\(listed.stdout)")
        #expect(iso.joined(separator: " ") == "iso ISO Speed menu 100 100, 200, 400, 800, 1600, 3200")
        #expect(rows.contains { $0.first == "batterylevel" && $0.last == "read-only" })
        // Actions (libgphoto2's `actions` section, a clock) are marked: sent once, never kept.
        #expect(listed.lines.contains { $0.hasPrefix("  opcode ") && $0.contains(" text, action ") }, "\(listed.stdout)")
        #expect(listed.lines.contains { $0.hasPrefix("  datetime ") && $0.contains(" date, action ") }, "\(listed.stdout)")
        #expect(listed.lines.contains("capturesettings") && listed.lines.contains("imgsettings"))

        // The same values and choices as the gphoto2 CLI reads through libgphoto2.
        let json = try await shutterpipe(["camera", "settings", "--port", camera.portSpec, "--json", "shutterspeed", "aperture"], in: folder.path,
                                         environment: environment)
        struct Report: Decodable { var model: String; var settings: [CameraSetting]; var actions: [String] }
        let report = try JSONDecoder().decode(Report.self, from: Data(json.stdout.utf8))
        #expect(report.settings.map(\.key) == ["shutterspeed", "f-number"] && report.actions.isEmpty)
        let actions = try await shutterpipe(["camera", "settings", "--port", camera.portSpec, "--json", "opcode", "iso"], in: folder.path, environment: environment)
        #expect(try JSONDecoder().decode(Report.self, from: Data(actions.stdout.utf8)).actions == ["opcode"], "\(actions.stdout)")
        let reference = try await camera.gphoto2(["--get-config", "shutterspeed"]).text
        let speed = try #require(report.settings.first)
        #expect(reference.contains("Current: \(speed.value)"))
        for choice in speed.choices { #expect(reference.contains(" \(choice)\n"), "\(choice) not in \(reference)") }

        let unknown = try await shutterpipe(["camera", "settings", "whitebalance", "--port", camera.portSpec], in: folder.path, environment: environment)
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("PTP/IP Camera has no setting 'whitebalance' (`shutterpipe camera settings` lists the settings this camera has)"),
                "\(unknown.stderr)")
        await camera.stop()
        let gone = try await shutterpipe(["camera", "settings", "--port", camera.portSpec], in: folder.path, environment: environment)
        #expect(gone.status == 1 && gone.stderr.contains("cannot open PTP/IP Camera at \(camera.portSpec)"), "\(gone.stderr)")
    }

    @Test("between shots, through the socket (shutterpipe set, get, its JSON) and stdin: applied values read back, the next photo taken with them; a refusal names the choices and changes nothing")
    func changesBetweenShots() async throws {
        let camera = try await FakeCamera()
        let folder = TemporaryDirectory("set")
        let socket = folder.file("session.sock")
        let out = folder.file("out")
        let config = try writeConfig(settingsConfig([camera], output: out, socket: socket), in: folder)
        let environment = ["HOME": camera.home.path]
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: environment)
        #expect(await shoot(session, answers: 1).last?.hasPrefix("photoSuccess") == true, "\(session.stderrSoFar)")

        let set = try await shutterpipe(["set", "iso=400", "shutterspeed=1/250", "--socket", socket], in: folder.path, environment: environment)
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.lines == ["iso           = 400", "shutterspeed  = 0.0040s"], "\(set.stdout)")
        #expect(await shoot(session, answers: 2).last?.hasPrefix("photoSuccess") == true)

        let refused = try await shutterpipe(["set", "iso=150", "aperture=22", "--socket", socket], in: folder.path, environment: environment)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("iso '150' is not offered by PTP/IP Camera; choices: 100, 200, 400, 800, 1600, 3200"), "\(refused.stderr)")
        #expect(refused.stderr.contains("aperture '22' is not offered by PTP/IP Camera; choices: f/2.8, f/4, f/5.6, f/8, f/11, f/16"))
        #expect(refused.stderr.contains("  iso       now 400"), "\(refused.stderr)")
        let read = try await shutterpipe(["get", "iso", "aperture", "--socket", socket], in: folder.path, environment: environment)
        #expect(read.lines == ["iso       400  menu  100, 200, 400, 800, 1600, 3200", "f-number  f/8  menu  f/2.8, f/4, f/5.6, f/8, f/11, f/16"], "\(read.stdout)")
        #expect(await shoot(session, answers: 3).last?.hasPrefix("photoSuccess") == true)

        // The socket's JSON, as a script speaks it.
        let client = try await SocketLines(path: socket)
        await client.send(#"{"set":{"iso":800},"id":"s1"}"# + "\n")
        let object = try #require(await client.replies(1).first, "no reply: \(client.lines)")
        #expect(object["id"] as? String == "s1" && object["event"] as? String == "set" && object["cause"] == nil, "\(client.lines)")
        #expect(((object["settings"] as? [[String: Any]])?.first?["value"] as? String) == "800", "\(client.lines)")
        await client.send(#"{"set":"iso"}"# + "\n")
        _ = await client.replies(2)
        #expect(client.lines.last?.contains(#""error":"\"set\" takes an object"#) == true, "\(client.lines)")

        // A line on stdin, then a shot.
        session.send("set iso=1600 aperture=5.6\n")
        #expect(await eventually { session.stdoutSoFar.contains("settingsApplied iso=1600 f-number=f/5.6") }, "\(session.stdoutSoFar)")
        #expect(await shoot(session, answers: 4).last?.hasPrefix("photoSuccess") == true)
        session.send("exit\n")
        #expect(await eventually { session.stdoutSoFar.contains("exitedOrUnableToEnter") })
        session.signal(SIGTERM)  // a socket trigger keeps a session open until it is stopped
        let outcome = await session.wait(timeout: .seconds(30))
        #expect(outcome.status == 0, "a refused setting is no failed event: \(outcome.stderr.suffix(2000))")

        let exposures = try await Self.exposures(out)
        #expect(exposures["set-0001-PTP_IP Camera.jpg"] == "iso 200 f/8 1/125 s", "\(exposures)")
        #expect(exposures["set-0002-PTP_IP Camera.jpg"] == "iso 400 f/8 1/250 s")
        #expect(exposures["set-0003-PTP_IP Camera.jpg"] == "iso 400 f/8 1/250 s", "the refused change changed nothing")
        #expect(exposures["set-0004-PTP_IP Camera.jpg"] == "iso 1600 f/5.6 1/250 s")
        #expect(outcome.stderr.contains("settings change from socket applied in"), "\(outcome.stderr.suffix(2000))")
    }

    @Test("a session's changes outlive a camera drop: the camera reconnected gets them again, not the config's")
    func keptAcrossADrop() async throws {
        let camera = try await FakeCamera(["--drop-after", "1"])
        let folder = TemporaryDirectory("set-drop")
        let out = folder.file("out")
        let config = try writeConfig(settingsConfig([camera], output: out, socket: folder.file("s.sock")), in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
        #expect(await shoot(session, answers: 1).last?.hasPrefix("photoSuccess") == true, "\(session.stderrSoFar)")
        session.send("set iso=800\n")
        #expect(await eventually { session.stdoutSoFar.contains("settingsApplied iso=800") }, "\(session.stdoutSoFar)")
        // The camera drops at the next capture; once the log says it is back, the next shot
        // is taken with the session's change.
        let dropped = await shoot(session, answers: 2).last ?? ""
        #expect(dropped.hasPrefix("photoFailed cameraFailure"), "\(dropped)")
        #expect(session.stderrSoFar.contains("camera connection lost"), "the camera did not drop: \(session.stderrSoFar.suffix(2000))")
        await session.waitForOutput("back at \(camera.portSpec)")
        let stored = await shoot(session, answers: 3).last?.hasPrefix("photoSuccess") == true
        #expect(stored, "\(session.stderrSoFar.suffix(3000))")
        session.signal(SIGTERM)  // a socket trigger keeps a session open until it is stopped
        _ = await session.wait(timeout: .seconds(30))
        let exposures = try await Self.exposures(out)
        #expect(exposures.count == 2, "\(exposures)")
        #expect(exposures.values.sorted() == ["iso 200 f/8 1/125 s", "iso 800 f/8 1/125 s"], "\(exposures)")
    }

    @Test("several cameras: a change one camera does not offer changes none; one camera alone with --camera; get names each camera")
    func rig() async throws {
        let home = TemporaryDirectory("set-rig-home")
        let cameras = [try await FakeCamera(home: home), try await FakeCamera(["--iso-choices", "100,200,400"], home: home)]
        let folder = TemporaryDirectory("set-rig")
        let socket = folder.file("rig.sock")
        let out = folder.file("out")
        let config = try writeConfig(settingsConfig(cameras, output: out, socket: socket), in: folder)
        let environment = ["HOME": home.path]
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: environment)
        #expect(await shoot(session, "enter", answers: 1).last == "enteredPhotoMode", "\(session.stderrSoFar)")

        let refused = try await shutterpipe(["set", "iso=800", "--socket", socket], in: folder.path, environment: environment)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("camera 'B': iso '800' is not offered by PTP/IP Camera; choices: 100, 200, 400"), "\(refused.stderr)")
        let unchanged = try await shutterpipe(["get", "iso", "--socket", socket], in: folder.path, environment: environment)
        #expect(unchanged.lines.map { $0.split(separator: " ").prefix(2).joined(separator: " ") } == ["A.iso 200", "B.iso 200"], "\(unchanged.stdout)")

        let both = try await shutterpipe(["set", "iso=400", "--socket", socket], in: folder.path, environment: environment)
        #expect(both.lines == ["A.iso  = 400", "B.iso  = 400"], "\(both.stdout) \(both.stderr)")
        let one = try await shutterpipe(["set", "iso=800", "--camera", "A", "--socket", socket], in: folder.path, environment: environment)
        #expect(one.lines == ["A.iso  = 800"], "\(one.stdout) \(one.stderr)")
        let nobody = try await shutterpipe(["set", "iso=800", "--camera", "C", "--socket", socket], in: folder.path, environment: environment)
        #expect(nobody.status == 1 && nobody.stderr.contains("no camera named 'C' in this session; its cameras: A, B"), "\(nobody.stderr)")
        #expect(await shoot(session, answers: 2).last?.hasPrefix("photoSuccess") == true, "\(session.stderrSoFar.suffix(2000))")
        session.signal(SIGTERM)  // a socket trigger keeps a session open until it is stopped
        _ = await session.wait(timeout: .seconds(30))
        let exposures = try await Self.exposures(out)
        #expect(exposures["set-0001-A.jpg"]?.hasPrefix("iso 800 ") == true && exposures["set-0001-B.jpg"]?.hasPrefix("iso 400 ") == true, "\(exposures)")
    }
}
