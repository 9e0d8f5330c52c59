import Dispatch
import Foundation
import TestSupport
import Testing

/// A test made to hang on purpose, to show what `scripts/test-runner` does with one (and to
/// check it: `scripts/test-steady --hang`). It starts a session that would hold its socket
/// for good and a child that leaves its process group, then blocks its thread where no
/// cancellation and no time limit can reach it, as a wait without a deadline would.
///
/// It runs only with SHUTTERPIPE_TEST_HANG=1; otherwise the runner leaves it out.
@Suite("the test runner's hang limit, on purpose")
struct HangOnPurposeTests {
    static let requested = ProcessInfo.processInfo.environment["SHUTTERPIPE_TEST_HANG"] == "1"

    @Test("a test that hangs for good: the runner names it as failed, kills what it started, runs the rest",
          .enabled(if: requested, "a demonstration: SHUTTERPIPE_TEST_HANG=1 scripts/test runs it"), .timeLimit(.minutes(1)))
    func hangsForGood() async throws {
        let folder = TemporaryDirectory("hang-on-purpose")
        let config = try writeConfig("""
        version: 1
        backend: {type: file-stub, width: 64, height: 48}
        triggers: [{type: socket, path: \(folder.file("s.sock"))}]
        sinks: [{type: files, directory: \(folder.file("out"))}]
        """, in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path)
        // setsid forks when its caller leads a group: the sleep ends up in a session of its
        // own, out of every group the test tracks; only the runner can still find it.
        let escaper = try await RunningProcess.start(program: "/usr/bin/setsid", ["sleep", "3600"], in: folder.path, input: .null)
        await session.waitForOutput("listening on")
        withExtendedLifetime(escaper) { Self.blockForever() }
    }

    /// Blocks the calling thread for good: no task cancellation reaches a semaphore.
    private static func blockForever() {
        DispatchSemaphore(value: 0).wait()
    }
}
