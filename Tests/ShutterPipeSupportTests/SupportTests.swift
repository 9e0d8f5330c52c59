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

    @Test("waitForCallback: true when called back in time (twice is once), false past its limit without cancelling the work; a LineWriter whose reader stopped returns after its patience and writes the line once the reader reads again")
    func callbacks() async throws {
        #expect(await waitForCallback(within: .seconds(60)) { done in DispatchQueue.global().async { done(); done() } })
        let late = Mutex<(@Sendable () -> Void)?>(nil)
        #expect(await !waitForCallback(within: .milliseconds(20)) { done in late.withLock { $0 = done } })
        late.withLock { $0 }?()  // after the wait gave up: ignored, no second resume

        // A reader that stopped: the writer's thread blocks on the gate; write returns after
        // its patience all the same, and the lines go out in order once the gate opens.
        let gate = DispatchSemaphore(value: 0), written = Mutex<[String]>([])
        let writer = LineWriter(label: "test line writer") { line in
            if line == "first" { gate.wait() }
            written.withLock { $0.append(line) }
        }
        await writer.write("first", patience: .milliseconds(20))
        await writer.write("second", patience: .milliseconds(20))
        #expect(written.withLock { $0 }.isEmpty)
        gate.signal()
        #expect(await eventually { written.withLock { $0 } == ["first", "second"] })
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

/// The process's umask, read without changing it (`/proc/self/status`).
private func currentUmask() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("Umask:") }
    return line.flatMap { Int($0.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8) } ?? 0o022
}
