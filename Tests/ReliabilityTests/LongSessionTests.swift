#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeSupport
import TestSupport
import Testing

/// Case 7: long sessions. Memory, file descriptors and speed must not depend on how many
/// shots came before.
@Suite("fault: long sessions", .serialized)
struct LongSessionTests {
    @Test("thousands of shots with the file-stub backend: memory bounded, no descriptor growth, no slowdown")
    func fileStub() async throws {
        let folder = TemporaryDirectory("chaos-long")
        try await longSession("long session, file-stub", shots: Chaos.count(ci: 2_000, full: 20_000), folder: folder,
                              backend: "  type: file-stub\n  width: 160\n  height: 120")
    }

    @Test("hundreds of shots through the virtual camera: the same")
    func virtualCamera() async throws {
        let folder = TemporaryDirectory("chaos-long-camera")
        let camera = try await FakeCamera(["--width", "160", "--height", "120"])
        try await longSession("long session, virtual camera", shots: Chaos.count(ci: 300, full: 2_000), folder: folder,
                              backend: "  type: gphoto2\n  port: \(camera.portSpec)", environment: ["HOME": camera.home.path], withWorkers: 1)
    }

    @Test("hundreds of events with four virtual cameras: memory of the session and its camera workers together stays flat")
    func fourCameras() async throws {
        let folder = TemporaryDirectory("chaos-long-rig")
        let home = TemporaryDirectory("chaos-long-rig-home")
        var entries: [String] = []
        var cameras: [FakeCamera] = []
        for name in ["A", "B", "C", "D"] {
            let camera = try await FakeCamera(["--width", "160", "--height", "120"], home: home)
            cameras.append(camera)
            entries.append("    - {name: \(name), port: '\(camera.portSpec)'}")
        }
        try await longSession("long session, four virtual cameras", shots: Chaos.count(ci: 150, full: 2_000), folder: folder,
                              backend: "  type: gphoto2\n  cameras:\n" + entries.joined(separator: "\n"), environment: ["HOME": home.path],
                              filename: "shot-{seq:05}-{camera}.{ext}", withWorkers: 4)
        #expect(folder.names("out").filter { $0.hasSuffix(".jpg") }.count == Chaos.count(ci: 150, full: 2_000) * 4)
    }

    /// - Parameter withWorkers: the number of camera workers the session should have;
    ///   their memory counts with the session's.
    func longSession(_ name: String, shots: Int, folder: TemporaryDirectory, backend: String,
                     environment: [String: String] = [:], filename: String = "shot-{seq:05}.{ext}", withWorkers: Int = 0) async throws {
        let socket = folder.file("s.sock")
        let config = try socketConfig(backend: backend, socket: socket, output: folder.file("out"), filename: filename,
                                      extra: "coordinator: {queueLimit: 16}", in: folder)
        let session = try await SocketSession.start(config, socket: socket, in: folder, environment: environment)
        let client = try await SocketLines(path: socket)
        let window = 8  // requests in flight: under the queue bound, so none is refused
        var sent = 0
        var samples: [(shots: Int, stats: ProcessStats)] = []
        let started = ContinuousClock.now
        while sent < shots {
            let batch = min(window, shots - sent)
            await client.send((sent..<(sent + batch)).map { "{\"event\":\"capture\",\"id\":\($0 + 1)}\n" }.joined())
            sent += batch
            let expected = sent
            #expect(await eventually(timeout: .seconds(60)) { client.lines.count >= expected }, "answers stalled at \(client.lines.count) of \(expected)")
            if sent % 100 < window, var stats = ProcessStats(session.pid) {
                let workers = try await runProgram(["pgrep", "-P", String(session.pid), "-f", "shutterpipe-camera-worker"]).text
                    .split(separator: "\n").compactMap { pid_t($0) }.compactMap(ProcessStats.init)
                #expect(workers.count == withWorkers, "camera workers at shot \(sent): \(workers.count)")
                stats.residentKiB += workers.map(\.residentKiB).reduce(0, +)
                stats.peakKiB += workers.map(\.peakKiB).reduce(0, +)
                samples.append((sent, stats))
            }
        }
        let elapsed = ContinuousClock.now - started
        let replies = await client.replies(shots)
        let milliseconds = replies.map(replyMilliseconds)
        let successes = replies.filter { $0["state"] as? String == "photoSuccess" }.count
        #expect(successes == shots, "every shot stored: \(successes) of \(shots)")
        let first = median(Array(milliseconds.prefix(100))), last = median(Array(milliseconds.suffix(100)))
        // A slowdown over thousands of shots is judged at full counts (scripts/chaos, on a
        // quiet machine). In the test command's short runs the other tests' load comes and
        // goes, so there it is only recorded.
        if Chaos.full {
            #expect(last <= first * 2 + 5, "no slowdown: median \(first) ms for the first 100 shots, \(last) ms for the last 100")
        }
        // Memory and descriptors after warm-up (the first sample) against the end.
        let warm = samples.first?.stats, end = samples.last?.stats
        let growthKiB = (end?.residentKiB ?? 0) - (warm?.residentKiB ?? 0)
        #expect(growthKiB < 16_384, "resident memory grew \(growthKiB) KiB from shot \(samples.first?.shots ?? 0) to \(shots)")
        let descriptors = samples.map(\.stats.descriptors)
        #expect((descriptors.max() ?? 0) - (descriptors.first ?? 0) <= 2, "file descriptors over the session: \(descriptors)")
        let stopped = await session.stop()
        #expect(stopped.status == 0, "the session's exit on SIGTERM: \(stopped.status)\n\(stopped.stderr.suffix(2000))")
        Chaos.record(name, ["shots": shots, "seconds": (elapsed.milliseconds / 10).rounded() / 100,
                            "msMedianFirst100": first, "msMedianLast100": last,
                            "residentKiBAfterWarmUp": warm?.residentKiB ?? 0, "residentKiBAtEnd": end?.residentKiB ?? 0,
                            "peakKiB": end?.peakKiB ?? 0, "descriptorsMin": descriptors.min() ?? 0, "descriptorsMax": descriptors.max() ?? 0])
    }
}
