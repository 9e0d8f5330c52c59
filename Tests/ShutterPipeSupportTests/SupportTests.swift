#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization
import TestSupport
import Testing

@Suite("Support: lines")
struct LineReaderTests {
    @Test("lines across chunk boundaries, empty lines, and a last line without a newline")
    func splitting() {
        var splitter = LineReader.Splitter(limit: 100)
        var lines = splitter.append(Array("one\ntw".utf8))
        lines += splitter.append(Array("o\n\nthr".utf8))
        lines += splitter.append(Array("ee".utf8))
        #expect(lines.map { String(decoding: $0, as: UTF8.self) } == ["one", "two", ""])
        #expect(splitter.finish().map { String(decoding: $0, as: UTF8.self) } == "three")
        #expect(splitter.finish() == nil)
    }

    @Test("an over-long line is delivered cut to the limit once, and the rest of it up to its newline is skipped")
    func overLong() {
        var splitter = LineReader.Splitter(limit: 8)
        var lines = splitter.append(Array(String(repeating: "x", count: 20).utf8))
        lines += splitter.append(Array((String(repeating: "y", count: 30) + "\nnext\n").utf8))
        #expect(lines.map { String(decoding: $0, as: UTF8.self) } == ["xxxxxxxx", "next"])
        #expect(splitter.finish() == nil)
    }

    @Test("forEachLine reads a pipe to its end, and stops when asked")
    func readingAPipe() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        try DescriptorIO.writeAll(Array("a\nb\nc".utf8), to: ends[1])
        close(ends[1])
        var seen: [String] = []
        let end = LineReader.forEachLine(in: ends[0]) { seen.append(String(decoding: $0, as: UTF8.self)); return true }
        #expect(seen == ["a", "b", "c"] && end == .endOfInput)
        close(ends[0])
    }
}

@Suite("Support: child processes")
struct ChildProcessTests {
    @Test("output, input and the exit status come back; a signal is named")
    func runToEnd() async throws {
        let echoed = try await ChildProcess.run(["sh", "-c", "cat; echo err >&2; exit 3"], input: Data("hello".utf8), captureErrors: true)
        #expect(echoed.status == .exited(3) && echoed.status.shellCode == 3 && !echoed.timedOut)
        #expect(String(decoding: echoed.output, as: UTF8.self) == "hello")
        #expect(String(decoding: echoed.errorOutput, as: UTF8.self) == "err\n")
        let killed = try await ChildProcess.run(["sh", "-c", "kill -9 $$"])
        #expect(killed.status == .signalled(SIGKILL) && killed.status.shellCode == 137)
        #expect(killed.status.description == "was killed by signal 9 (SIGKILL)")
    }

    @Test("past its timeout a program is killed with everything it started")
    func timeoutKillsTheGroup() async throws {
        let folder = TemporaryDirectory("child-group")
        let background = folder.file("background")
        let started = ContinuousClock.now
        let result = try await ChildProcess.run(["sh", "-c", "sleep 30 & echo $! > \(background); sleep 30"], timeout: .milliseconds(300), processGroup: true)
        #expect(result.timedOut && result.status == .signalled(SIGKILL))
        #expect(ContinuousClock.now - started < .seconds(20))
        let pid = try #require(pid_t(try String(contentsOfFile: background, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(await processEnded(pid), "the background child outlived the timeout")
    }

    @Test("writing to a child that died is an error (EPIPE), not a signal; a missing program is an error too")
    func deadChild() async throws {
        let child = try ChildProcess(["true"], input: .pipe)
        #expect(await child.exitStatus() == .exited(0))
        #expect(throws: SystemError.self) { try child.write(Array(repeating: UInt8(ascii: "x"), count: 200_000)) }
        do {
            _ = try ChildProcess(["/nonexistent/program"])
            Issue.record("a missing program started")
        } catch {
            #expect(error.code == ENOENT && error.description.contains("cannot start /nonexistent/program"))
        }
    }

    @Test("the child inherits no descriptor but the standard three, even one opened without close-on-exec")
    func descriptorsClosed() async throws {
        let folder = TemporaryDirectory("child-fds")
        let leaky = open(folder.file("open"), O_WRONLY | O_CREAT, 0o644)  // no O_CLOEXEC
        defer { close(leaky) }
        let listing = try await ChildProcess.run(["sh", "-c", "ls /proc/self/fd"])
        let descriptors = String(decoding: listing.output, as: UTF8.self).split(separator: "\n").compactMap { Int32($0) }
        #expect(!descriptors.contains(leaky), "\(descriptors)")
    }
}

@Suite("Support: Unix sockets and deadlines")
struct SocketAndDeadlineTests {
    @Test("a path longer than a socket address holds is refused, never cut")
    func longPath() {
        let path = "/tmp/" + String(repeating: "s", count: 120) + ".sock"
        do {
            _ = try UnixSocket.connect(to: path)
            Issue.record("connected to a cut path")
        } catch {
            #expect(error.code == ENAMETOOLONG)
            #expect(error.operation == "socket path '\(path)' is longer than \(UnixSocket.maximumPathLength) bytes")
        }
        #expect(UnixSocket.maximumPathLength == 107)
    }

    @Test("listen replaces a stale socket file and refuses a live one")
    func listenReplacesStale() async throws {
        let folder = TemporaryDirectory("socket")
        let path = folder.file("s.sock")
        let first = try UnixSocket.listen(at: path)
        do {
            _ = try UnixSocket.listen(at: path)
            Issue.record("a second listener took a live socket")
        } catch {
            #expect(error.code == EADDRINUSE)
        }
        close(first)  // the file stays: stale now
        // Once nobody listens. A child another test is starting right now holds a copy of
        // every descriptor from its fork to its exec (close-on-exec closes it only then), so
        // the socket may live on for a moment after our close.
        #expect(await eventually {
            guard let probe = try? UnixSocket.connect(to: path) else { return true }
            close(probe)
            return false
        })
        let second = try UnixSocket.listen(at: path)
        let client = try UnixSocket.connect(to: path)
        close(client)
        close(second)
    }

    @Test("listening never changes the process's umask: folders other threads make meanwhile keep their mode (the socket is 0600 all the same)")
    func listenKeepsUmask() async throws {
        let folder = TemporaryDirectory("umask")
        let expected = 0o777 & ~currentUmask()
        let state = Mutex((stop: false, made: 0, modes: Set<mode_t>()))
        // Another thread makes folders while sockets are bound, as a files sink or a camera
        // worker's home folder would beside a socket trigger starting. Under a umask of
        // 0177 for the bind, such a folder came out 0600: its owner could not enter it.
        let maker = Thread {
            var index = 0
            while !state.withLock({ $0.stop }) {
                let path = folder.file("d\(index)")
                mkdir(path, 0o777)
                var info = stat()
                if stat(path, &info) == 0 { state.withLock { _ = $0.modes.insert(info.st_mode & 0o777); $0.made += 1 } }
                rmdir(path)
                index += 1
            }
        }
        maker.start()
        #expect(await eventually { state.withLock { $0.made > 0 } })
        for index in 0..<300 {
            let path = folder.file("s\(index).sock")
            let descriptor = try UnixSocket.listen(at: path)
            var info = stat()
            #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
            close(descriptor)
            unlink(path)
        }
        let modes = state.withLock { $0.stop = true; return $0.modes }
        #expect(modes == [mode_t(expected)], "folders made during the binds: \(modes.map { String($0, radix: 8) })")
    }

    @Test("abandoningOnCancel stops waiting at once; withDeadline says what did not finish")
    func abandoning() async throws {
        let finished = Mutex(false), started = Mutex(false)
        let task = Task {
            try await abandoningOnCancel {
                await withCheckedContinuation { continuation in
                    started.withLock { $0 = true }
                    DispatchQueue.global().asyncAfter(deadline: .now() + 30) { finished.withLock { $0 = true }; continuation.resume() }
                }
            }
        }
        // Cancelled while the operation surely runs: abandoned, not merely never begun.
        #expect(await eventually { started.withLock { $0 } })
        let cancelled = ContinuousClock.now
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        // Not the operation's 30 s, with room for a loaded machine: at the start of a full run
        // with every core busy, the pool took 16 s to run the cancelled task's end.
        #expect(ContinuousClock.now - cancelled < .seconds(25))
        #expect(!finished.withLock { $0 })  // it was abandoned, not awaited
        do {
            try await withDeadline(.milliseconds(50), "the slow thing") { try await Task.sleep(for: .seconds(10)) }
            Issue.record("no timeout")
        } catch let error as ShutterError {
            #expect(error.cause == .timeout && error.message == "the slow thing did not finish within 50 ms")
        }
        #expect(formatByteCount(999) == "999 B" && formatByteCount(1_500_000) == "1.5 MB")
    }
}

@Suite("Support: blocking queues")
struct BlockingQueueTests {
    private static func niceOfThisThread() -> Int32 {
        errno = 0
        return getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
    }

    @Test("a background queue's thread runs 10 nice levels lower; the caller's thread and a normal queue keep theirs")
    func backgroundPriority() async throws {
        let before = Self.niceOfThisThread()
        let background = BlockingQueue(label: "test background", priority: .background)
        let normal = BlockingQueue(label: "test normal")
        let lowered = await background.run { Self.niceOfThisThread() }
        let kept = await normal.run { Self.niceOfThisThread() }
        #expect(lowered == min(19, before + 10))
        #expect(kept == before)
        #expect(Self.niceOfThisThread() == before)
        // A program started from the background thread inherits its priority.
        let child = try await background.run { try ChildProcess.run(["/bin/sh", "-c", "cut -d' ' -f19 /proc/self/stat"]) }
        #expect(String(decoding: child.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == String(min(19, before + 10)))
    }
}

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
        let program = try RunningProcess(program: "/bin/sh", ["-c", "echo bye >&2; exit 4"], in: folder.path)
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
            let program = try RunningProcess(program: "/bin/sh", ["-c", "echo last words >&2; sleep 60 & echo $! > \(background); wait"],
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
        let program = try RunningProcess(program: "/bin/sh", ["-c", "sleep 60 & echo $! > \(background); echo still here; wait"], in: folder.path)
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
        let quiet = try RunningProcess(program: "/bin/sh", ["-c", "echo ready >&2; exec sleep 60"], in: folder.path)
        #expect(await quiet.waitForOutput("ready"))
        await withKnownIssue("the wait is recorded as a failure of this test") {
            #expect(await quiet.waitForOutput("the shot", timeout: .milliseconds(200)) == false)
        } matching: { $0.description.contains("waited for 'the shot' on the stderr of sleep") == false
            && $0.description.contains("waited for 'the shot' on the stderr of sh -c") && $0.description.contains("not within 0.2 seconds") }
        let ended = try RunningProcess(program: "/bin/sh", ["-c", "echo goodbye; exit 2"], in: folder.path)
        await withKnownIssue("the wait is recorded as a failure of this test") {
            #expect(await ended.waitForOutput("hello", on: .stdout) == false)
        } matching: { $0.description.contains("it exited with 2 first") && $0.description.contains("goodbye") }
    }

    @Test("dropping a child kills its group; a helper program past its timeout is an error showing its output")
    func droppedAndTimedOut() async throws {
        let folder = TemporaryDirectory("dropped")
        let background = folder.file("background")
        var program: RunningProcess? = try RunningProcess(program: "/bin/sh", ["-c", "sleep 60 & echo $! > \(background); wait"], in: folder.path)
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

/// The process's umask, read without changing it (`/proc/self/status`).
private func currentUmask() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("Umask:") }
    return line.flatMap { Int($0.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8) } ?? 0o022
}
