#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import TestSupport
import Testing

/// The frame numbers in a stream's pieces, each with when it arrived.
func liveFrames(_ pieces: [TimedPiece]) -> [(number: Int, at: ContinuousClock.Instant)] {
    pieces.flatMap { piece -> [(Int, ContinuousClock.Instant)] in
        let text = String(decoding: piece.data, as: UTF8.self)
        return text.components(separatedBy: "live view frame ").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }.map { ($0, piece.at) }
    }
}

/// A session on the gphoto2 backend with `camera`, a stdin and a web trigger; returns it
/// and the web port, once it listens.
func liveSession(_ camera: FakeCamera, in folder: TemporaryDirectory) async throws -> (RunningProcess, UInt16) {
    let config = try writeConfig("""
    version: 1
    session: live
    backend: {type: gphoto2, port: "\(camera.portSpec)"}
    triggers:
      - type: stdin
      - {type: web, listen: "127.0.0.1:0"}
    sinks: [{type: files, directory: \(folder.file("out"))}]
    coordinator: {captureTimeout: 20s, enterTimeout: 20s}
    """, in: folder)
    let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": camera.home.path])
    guard let port = await webPort(session) else { throw TestSupportError("the web trigger did not start: \(session.stderrSoFar)") }
    return (session, port)
}

/// A session on a rig of `cameras` (named A, B, …) with stdin, web and `triggers`.
func liveRigSession(_ cameras: [FakeCamera], in folder: TemporaryDirectory, home: TemporaryDirectory, triggers: [String] = []) async throws -> RunningProcess {
    let names = cameras.indices.map { String(UnicodeScalar(UInt8(65 + $0))) }
    let config = try writeConfig("""
    version: 1
    session: rig
    backend:
      type: gphoto2
      cameras:
    \(zip(names, cameras).map { "    - {name: \($0), port: \"\($1.portSpec)\"}" }.joined(separator: "\n"))
    triggers:
      - type: stdin
      - {type: web, listen: "127.0.0.1:0"}
    \(triggers.map { "  - \($0)" }.joined(separator: "\n"))
    sinks: [{type: files, directory: \(folder.file("out"))}]
    coordinator: {captureTimeout: 20s, enterTimeout: 20s}
    """, in: folder)
    return try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: ["HOME": home.path])
}

@Suite("web trigger: live view (real libgphoto2, the virtual camera's PTP 1.1 stream)", .timeLimit(.minutes(2)))
struct LiveViewTests {
    @Test("gphoto2 --capture-preview reads a frame from the virtual camera: real libgphoto2 accepts its stream")
    func gphoto2ReadsAFrame() async throws {
        let camera = try await FakeCamera()
        let folder = TemporaryDirectory("live-gphoto2")
        let run = try await camera.gphoto2(["--capture-preview", "--filename", folder.file("frame.jpg")])
        #expect(run.status == 0, "\(run.text)\n\(run.errors)")
        let frame = try Data(contentsOf: URL(fileURLWithPath: folder.file("thumb_frame.jpg")))  // gphoto2 names a preview thumb_…
        #expect(frame.prefix(2) == Data([0xFF, 0xD8]) && String(decoding: frame.prefix(200), as: UTF8.self).contains("live view frame 1"))
    }

    @Test("/live.mjpg delivers frames before, during and after a capture (a one-second exposure), and two viewers share one camera stream")
    func framesAroundACapture() async throws {
        let folder = TemporaryDirectory("live-web")
        // The exposure is held at the camera's gate until frames have flowed during it.
        let gate = try FileGate(in: folder)
        let camera = try await FakeCamera(["--gate", gate.path])
        let (session, port) = try await liveSession(camera, in: folder)
        session.send("enter\n")
        #expect(await eventually { session.stdoutSoFar.contains("enteredPhotoMode") }, "\(session.stderrSoFar)")

        // Each viewer reads until it has seen three frames after the capture's answer.
        let answeredAt = Mutex<ContinuousClock.Instant?>(nil)
        let enough: @Sendable ([TimedPiece]) -> Bool = { pieces in
            guard let answered = answeredAt.withLock({ $0 }) else { return false }
            return liveFrames(pieces).filter { $0.at > answered }.count >= 3
        }
        let first = Task { try await httpStreamTimed("/live.mjpg", port: port, for: .seconds(60), until: enough) }
        let second = Task { try await httpStreamTimed("/live.mjpg", port: port, for: .seconds(60), until: enough) }
        // Frames flow before the capture (a loaded machine takes a while for the first).
        @Sendable func framesServed() async -> Int { (try? await http("GET", "/api/status", port: port))?.json?["liveViewFrames"] as? Int ?? 0 }
        #expect(await eventually { await framesServed() >= 5 })
        let fired = ContinuousClock.now
        let capture = Task { try await http("POST", "/api/capture", port: port) }
        await camera.waitForLog("capture 1 waits at the gate")
        let atExposure = await framesServed()
        #expect(await eventually { await framesServed() >= atExposure + 3 }, "no frames while the camera exposes")
        try gate.release()
        let answer = try await capture.value
        let answered = ContinuousClock.now
        answeredAt.withLock { $0 = answered }
        #expect(answer.json?["state"] as? String == "photoSuccess", "\(String(decoding: answer.body, as: UTF8.self))")
        let frames = liveFrames(try await first.value), shared = liveFrames(try await second.value)
        let before = frames.filter { $0.at < fired }.count
        let during = frames.filter { $0.at >= fired && $0.at < answered }.count
        let after = frames.filter { $0.at >= answered }.count
        #expect(before > 0 && during > 0 && after > 0, "frames before \(before), during \(during), after \(after) the capture")
        let numbers = frames.map(\.number)
        #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count, "frame numbers in order, none twice")
        // One stream of the camera for both: the same frames, not twice as many.
        let both = Set(numbers).intersection(shared.map(\.number))
        #expect(Double(both.count) >= 0.8 * Double(min(numbers.count, shared.count)), "viewer 1 \(numbers.count) frames, viewer 2 \(shared.count), shared \(both.count)")
        let status = try #require(try await http("GET", "/api/status", port: port).json)
        #expect(status["liveView"] as? Bool == true && (status["cameras"] as? [[String: Any]])?.first?["battery"] as? String == "87%", "\(status)")
        session.signal(SIGTERM)
        #expect(await session.wait(timeout: .seconds(30)).status == 0)
    }

    @Test("a camera without live view: /live.mjpg is refused with the reason, /api/status says liveView false and why, the log says so once; gphoto2 --capture-preview fails too")
    func noLiveView() async throws {
        let camera = try await FakeCamera(["--no-live-view"])
        let cli = try await camera.gphoto2(["--capture-preview"])
        #expect(cli.status != 0, "the CLI read a frame: \(cli.text)")
        let folder = TemporaryDirectory("no-live-view")
        let (session, port) = try await liveSession(camera, in: folder)
        session.send("enter\n")
        await session.waitForOutput("enteredPhotoMode", on: .stdout)
        for _ in 1...2 {
            let refused = try await http("GET", "/live.mjpg", port: port)
            let text = String(decoding: refused.body, as: UTF8.self)
            #expect(refused.status == 501 && text.contains("live view: PTP/IP Camera has no live view that libgphoto2 can reach"), "\(refused.status) \(text)")
        }
        let status = try #require(try await http("GET", "/api/status", port: port).json)
        #expect(status["liveView"] as? Bool == false && (status["liveViewUnavailable"] as? String)?.contains("has no live view") == true, "\(status)")
        session.send("capture\n")
        await session.waitForOutput("photoSuccess", on: .stdout)
        session.send("exit\n")
        session.signal(SIGTERM)
        let outcome = await session.wait(timeout: .seconds(30))
        #expect(outcome.stderr.components(separatedBy: "live view: PTP/IP Camera has no live view").count == 2, "\(outcome.stderr.suffix(2000))")
    }

    @Test("a rig: /live/{camera}.mjpg for each camera, an unknown name refused with the cameras' names; a camera's stream stops with its last viewer while another's goes on, and status counts each one's viewers")
    func perCamera() async throws {
        let folder = TemporaryDirectory("live-rig-routes"), home = TemporaryDirectory("live-rig-routes-home")
        let cameras = [try await FakeCamera(home: home), try await FakeCamera(home: home)]
        let session = try await liveRigSession(cameras, in: folder, home: home)
        let port = try #require(await webPort(session), "\(session.stderrSoFar)")
        session.send("enter\n")
        #expect(await session.waitForOutput("enteredPhotoMode", on: .stdout))
        let unknown = try await http("GET", "/live/C.mjpg", port: port)
        #expect(unknown.status == 404 && (unknown.json?["fix"] as? String)?.contains("A, B") == true, "\(unknown.status) \(String(decoding: unknown.body, as: UTF8.self))")
        @Sendable func camera(_ name: String) async -> [String: Any] {
            let status = try? await http("GET", "/api/status", port: port).json
            return (status?["liveViewCameras"] as? [[String: Any]])?.first { $0["name"] as? String == name } ?? [:]
        }
        let a = try await httpStreamTimed("/live/A.mjpg", port: port, for: .seconds(60)) { liveFrames($0).count >= 5 }
        #expect(liveFrames(a).count >= 5, "camera A's stream")
        #expect(await eventually { await camera("A")["viewers"] as? Int == 0 }, "A's viewer left")
        let stoppedAt = await camera("A")["frames"] as? Int ?? -1
        // While B streams, A makes no more frames: nobody watches it.
        let b = try await httpStreamTimed("/live/B.mjpg", port: port, for: .seconds(60)) { liveFrames($0).count >= 10 }
        #expect(liveFrames(b).count >= 10, "camera B's stream")
        let aFrames = await camera("A")["frames"] as? Int ?? -1
        #expect(aFrames <= stoppedAt + 1, "A made frames with nobody watching: \(stoppedAt) when its viewer left, \(aFrames) after B's stream")
        let other = await camera("B")
        #expect(other["liveView"] as? Bool == true && other["frames"] as? Int ?? 0 >= 10, "\(other)")
        session.signal(SIGTERM)
        #expect(await session.wait(timeout: .seconds(30)).status == 0)
    }
}
