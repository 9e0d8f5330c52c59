#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization
import TestSupport
import Testing

/// Waits (up to 30 s) until `pid` has ended: gone, or a zombie nobody reaped yet.
func processEnded(_ pid: pid_t) async -> Bool {
    await eventually(timeout: .seconds(30)) {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
    }
}

@Suite("Test helpers fail a test, never the test process")
struct TestHelperTests {
    @Test("writing to a program that has exited records a failure naming the program, and the test process carries on")
    func writeToExitedProgram() async throws {
        let folder = TemporaryDirectory("dead-child")
        let program = try await RunningProcess.start(program: "/bin/sh", ["-c", "echo bye >&2; exit 4"], in: folder.path)
        let outcome = await program.wait()
        #expect(outcome.status == 4)
        withKnownIssue("the write is recorded as a failure of this test") {
            #expect(program.send(String(repeating: "x", count: 300_000)) == false)
        } matching: { issue in
            issue.description.contains("sh -c echo bye") && issue.description.contains("did not take input")
                && issue.description.contains("it exited with 4") && issue.description.contains("bye")
        }
    }

    @Test("a child still running at its deadline is killed with everything it started, and the test fails naming it, with its last output")
    func deadlineKillsTheGroup() async throws {
        let folder = TemporaryDirectory("deadline")
        let background = folder.file("background")
        try await withKnownIssue("the deadline is recorded as a failure of this test") {
            let program = try await RunningProcess.start(program: "/bin/sh", ["-c", "echo last words >&2; sleep 60 & echo $! > \(background); wait"],
                                             in: folder.path, deadline: .milliseconds(500))
            let outcome = await program.wait(timeout: .seconds(60))
            #expect(outcome.status == 128 + SIGKILL && !outcome.timedOut)
        } matching: { issue in
            issue.description.contains("sh -c echo last words") && issue.description.contains("was still running at its deadline")
                && issue.description.contains("its process group was killed") && issue.description.contains("last words")
        }
        let pid = try #require(pid_t(try String(contentsOfFile: background, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(await processEnded(pid), "the child's own child outlived the deadline")
    }

    @Test("a wait past its timeout kills the group and fails, naming what it waited for")
    func waitTimeoutKillsTheGroup() async throws {
        let folder = TemporaryDirectory("wait-timeout")
        let background = folder.file("background")
        let program = try await RunningProcess.start(program: "/bin/sh", ["-c", "sleep 60 & echo $! > \(background); echo still here; wait"], in: folder.path)
        await withKnownIssue("the timeout is recorded as a failure of this test") {
            let outcome = await program.wait(timeout: .milliseconds(300), for: "the end of the demo")
            #expect(outcome.timedOut && outcome.status == 128 + SIGKILL)
        } matching: { issue in
            issue.description.contains("did not exit within 0.3 seconds (waiting for the end of the demo)") && issue.description.contains("still here")
        }
        let pid = try #require(pid_t(try String(contentsOfFile: background, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(await processEnded(pid))
    }

    @Test("a line that never comes fails the wait for it, naming the line; so does the program ending without it")
    func waitForOutput() async throws {
        let folder = TemporaryDirectory("wait-line")
        let quiet = try await RunningProcess.start(program: "/bin/sh", ["-c", "echo ready >&2; exec sleep 60"], in: folder.path)
        #expect(await quiet.waitForOutput("ready"))
        await withKnownIssue("the wait is recorded as a failure of this test") {
            #expect(await quiet.waitForOutput("the shot", timeout: .milliseconds(200)) == false)
        } matching: { $0.description.contains("waited for 'the shot' on the stderr of sleep") == false
            && $0.description.contains("waited for 'the shot' on the stderr of sh -c") && $0.description.contains("not within 0.2 seconds") }
        let ended = try await RunningProcess.start(program: "/bin/sh", ["-c", "echo goodbye; exit 2"], in: folder.path)
        await withKnownIssue("the wait is recorded as a failure of this test") {
            #expect(await ended.waitForOutput("hello", on: .stdout) == false)
        } matching: { $0.description.contains("it exited with 2 first") && $0.description.contains("goodbye") }
    }

    @Test("dropping a child kills its group; a helper program past its timeout is an error showing its output")
    func droppedAndTimedOut() async throws {
        let folder = TemporaryDirectory("dropped")
        let background = folder.file("background")
        var program: RunningProcess? = try await RunningProcess.start(program: "/bin/sh", ["-c", "sleep 60 & echo $! > \(background); wait"], in: folder.path)
        let leader = try #require(program?.pid)
        // The shell creates the file before it writes the number: wait for the number.
        let written: @Sendable () -> pid_t? = {
            (try? String(contentsOfFile: background, encoding: .utf8)).flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        #expect(await eventually(timeout: .seconds(30)) { written() != nil })
        program = nil
        #expect(await processEnded(leader))
        let pid = try #require(written())
        #expect(await processEnded(pid))
        do {
            _ = try await runProgram(["sh", "-c", "echo progress; sleep 60"], timeout: .milliseconds(300))
            Issue.record("a program past its timeout returned")
        } catch {
            #expect("\(error)".contains("did not finish within 0.3 seconds: its process group was killed") && "\(error)".contains("progress"), "\(error)")
        }
    }

    @Test("a gate holds each arrival until released, counts them, and lets a cancelled wait go")
    func gates() async throws {
        let gate = Gate("test gate")
        let passed = Timeline()
        let first = Task { try await gate.pass(); passed.note("passed") }
        let second = Task { try await gate.pass(); passed.note("passed") }
        #expect(await gate.waitForArrivals(2))
        #expect(passed.all.isEmpty)
        gate.release()
        #expect(await eventually(timeout: .seconds(30)) { passed.all.count == 1 })
        gate.release()
        try await first.value
        try await second.value
        #expect(passed.all.count == 2)
        let held = Task { try await gate.pass() }
        #expect(await gate.waitForArrivals(3))
        held.cancel()
        await #expect(throws: CancellationError.self) { try await held.value }
        gate.open()
        try await gate.pass()
        #expect(gate.arrivals == 4)
    }

    @Test("a helper program that was not built is an error naming where it was looked for")
    func missingBinary() {
        do {
            _ = try builtExecutable("shutterpipe-never-built")
            Issue.record("found a binary that does not exist")
        } catch {
            #expect("\(error)".contains("the shutterpipe-never-built executable was not built"))
        }
    }
}
