#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import GPhoto2Backend
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization
import TestSupport
import Testing

/// A camera worker's start, held at a gate: what is asked meanwhile waits for it.
@Suite("camera worker start: requests wait for it in order; one given up meanwhile is never sent", .timeLimit(.minutes(2)))
struct WorkerStartTests {
    @Test("while the worker is held at its start, a request given up is never sent, and one given up once sent but not begun is abandoned (so the new worker is not killed for either); the others are answered once it runs")
    func heldStart() async throws {
        let folder = TemporaryDirectory("worker-start")
        let gate = folder.file("gate")
        #expect(mkfifo(gate, 0o600) == 0)
        // The worker program waits for a line on the gate, then becomes the real worker.
        let wrapper = folder.file("held-worker")
        try "#!/bin/sh\nread line < '\(gate)'\nexec '\(try builtExecutable("shutterpipe-camera-worker"))'\n"
            .writeTestFile(wrapper)
        #expect(chmod(wrapper, 0o755) == 0)
        let logged = Mutex<[String]>([])
        let log = Logger(source: "test") { record in logged.withLock { $0.append(record.message) } }
        let worker = CameraWorker(name: "held", settingsFolder: folder.file("settings"), log: log,
                                  confinement: WorkerConfinement(enabled: false), executable: wrapper)

        let givenUp = worker.send(.status)
        let first = worker.send(.status), second = worker.send(.status)
        let waiting = Task { try await worker.reply(to: givenUp) }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiting.value }

        // Open the gate: the held program is reading it once it started.
        let writer = Mutex<Int32>(-1)
        defer { writer.withLock { if $0 >= 0 { close($0) } } }
        #expect(await eventually {
            writer.withLock { descriptor in
                if descriptor < 0 { descriptor = open(gate, O_WRONLY | O_NONBLOCK) }
                return descriptor >= 0
            }
        }, "the worker program never opened its gate")
        // The program is spawned (it reads the gate) but not yet the worker: a request given
        // up now was written to it, never begun; it is abandoned, and nothing is killed.
        let sentThenGivenUp = worker.send(.status)
        let waitingAfterSpawn = Task { try await worker.reply(to: sentThenGivenUp) }
        waitingAfterSpawn.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waitingAfterSpawn.value }
        _ = writer.withLock { descriptor in Array("go\n".utf8).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } }

        for id in [first, second] {
            let (reply, descriptors, _) = try await withDeadline(.seconds(60), "the answer to a request that waited") { try await worker.reply(to: id) }
            descriptors.forEach { _ = close($0) }
            guard case .status = reply else { Issue.record("request \(id) got \(reply)"); continue }
        }
        // A worker that had been sent the given-up request would have begun it and been
        // killed for it; this one answers on.
        let after = try await worker.request(.status)
        guard case .status = after else { Issue.record("got \(after)"); return }
        #expect(!logged.withLock { $0 }.contains { $0.contains("killed and restarted") || $0.contains("restarted") }, "\(logged.withLock { $0 })")
        await worker.stop()
    }
}
