#if canImport(Glibc)
import Glibc
#endif
import CTestSupport
import Dispatch
import Foundation
import ShutterPipeSupport
import Synchronization
import Testing

/// How long the children of tests may live.
public enum TestDeadline {
    /// The default lifetime of a child a test starts (a session, a camera, a broker): past
    /// it, the child's process group is killed and the test that started it fails. Every
    /// test ends well within it on a loaded two-core machine; full chaos counts
    /// (`SHUTTERPIPE_CHAOS=full`) run for longer.
    public static var process: Duration {
        ProcessInfo.processInfo.environment["SHUTTERPIPE_CHAOS"] == "full" ? .seconds(7_200) : .seconds(300)
    }
}

/// A child process of a test, under a helper that no test can outlive:
///
/// - it leads a process group of its own, so whatever it starts (camera workers, hooks,
///   a shell's children) goes with it;
/// - it has a deadline: past it, the group is killed, and the test fails with what the
///   child printed last;
/// - dropping it kills the group; so does the end of the test process, even by Ctrl-C or
///   a runner's SIGTERM (the groups are tracked where a signal handler can reach them);
/// - every wait on it (its exit, a line it prints) has a timeout that fails the test,
///   saying what it waited for.
///
/// Its standard input is a pipe (or /dev/null); its output goes to files of its own, so a
/// test reads what it printed so far at any time.
public final class RunningProcess: Sendable {
    /// Where a test reads a child's output.
    public enum Stream: String, Sendable { case stdout, stderr }

    /// The program and its first arguments, for messages ("shutterpipe run --config …").
    public let name: String
    private let child: ChildProcess
    private let output: TemporaryDirectory
    private let deadline: Duration
    private let state = Mutex<(killedAtDeadline: Bool, reported: Bool)>((false, false))

    /// Starts `shutterpipe` with `arguments` in `directory`.
    public convenience init(_ arguments: [String], in directory: String, environment: [String: String] = [:],
                            deadline: Duration = TestDeadline.process) throws {
        try self.init(program: try shutterpipeBinary(), arguments, in: directory, environment: environment, deadline: deadline)
    }

    /// Starts `shutterpipe` with `arguments` in `directory`, from a queue of its own: a
    /// spawn blocks its thread until the child has started (seconds, on a loaded machine),
    /// which on a thread of the cooperative pool stalls every test beside it.
    public static func start(_ arguments: [String], in directory: String, environment: [String: String] = [:],
                             deadline: Duration = TestDeadline.process) async throws -> RunningProcess {
        let program = try shutterpipeBinary()
        return try await start(program: program, arguments, in: directory, environment: environment, deadline: deadline)
    }

    /// Starts `program` with `arguments` from a queue of its own (see ``start(_:in:environment:deadline:)``).
    public static func start(program: String, _ arguments: [String], in directory: String?, environment: [String: String] = [:],
                             deadline: Duration = TestDeadline.process, input: ChildProcess.Redirection = .pipe) async throws -> RunningProcess {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<RunningProcess, any Error>) in
            spawning.async {
                continuation.resume(with: Result {
                    try RunningProcess(program: program, arguments, in: directory, environment: environment, deadline: deadline, input: input)
                })
            }
        }
    }

    /// Starts `program` (a path, or a name looked up on PATH) with `arguments`.
    ///
    /// - Parameters:
    ///   - directory: its working directory; `nil` keeps the test process's.
    ///   - environment: added to (and overriding) the test process's environment.
    ///   - deadline: the longest it may run before its group is killed and the test fails.
    ///   - input: `.pipe` (the default: ``send(_:sourceLocation:)``, ``closeInput()``) or `.null`.
    public init(program: String, _ arguments: [String], in directory: String?, environment: [String: String] = [:],
                deadline: Duration = TestDeadline.process, input: ChildProcess.Redirection = .pipe) throws {
        ignoreSIGPIPE()
        shutterpipe_test_install_cleanup()
        name = ([(program as NSString).lastPathComponent] + arguments.prefix(3).map { $0.count > 60 ? $0.prefix(30) + "…" + $0.suffix(25) : $0 })
            .joined(separator: " ") + (arguments.count > 3 ? " …" : "")
        self.deadline = deadline
        output = TemporaryDirectory("output")
        child = try ChildProcess([program] + arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                                 directory: directory, input: input, output: .file(output.file("stdout")), error: .file(output.file("stderr")),
                                 processGroup: true)
        shutterpipe_test_track_group(child.pid)
        DispatchQueue.global().asyncAfter(deadline: .now() + deadline.timeInterval) { [weak self] in self?.deadlinePassed() }
    }

    deinit {
        killGroup()
        shutterpipe_test_untrack_group(child.pid)
        if state.withLock({ $0.killedAtDeadline && !$0.reported }) {
            Issue.record(Comment(rawValue: deadlineMessage()))
        }
    }

    /// The process ID (and the ID of its process group).
    public var pid: pid_t { child.pid }

    /// Whether it still runs.
    public var isRunning: Bool { child.isRunning }

    /// How it ended, or `nil` while it runs.
    public var exitStatus: ChildProcess.ExitStatus? { child.status }

    /// Sends `signal` to it (not to what it started).
    public func signal(_ signal: Int32) { child.signal(signal) }

    /// Kills its whole process group: it and everything it started.
    public func killGroup() { kill(-child.pid, SIGKILL) }

    /// Writes to its standard input. A program that has exited, or closed its input, makes
    /// this record a failure in the running test, with the program's status and what it
    /// printed, and return false: never a crash of the whole test process.
    @discardableResult
    public func send(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        do {
            try child.write(Array(text.utf8))
            return true
        } catch {
            let status = child.waitUntilExit(timeout: .milliseconds(200)).map { "it \($0)" } ?? "it still runs"
            Issue.record("\(name) did not take input (\(error.reason)); \(status)\n\(lastLines())", sourceLocation: sourceLocation)
            return false
        }
    }

    /// Writes to its standard input; false when it cannot take it (no failure recorded).
    func write(_ bytes: Data) -> Bool { (try? child.write(bytes)) != nil }

    /// Closes its standard input: it sees end of input.
    public func closeInput() { child.closeInput() }

    /// What it printed on standard error so far.
    public var stderrSoFar: String { text(.stderr) }

    /// What it printed on standard output so far.
    public var stdoutSoFar: String { text(.stdout) }

    /// What it printed on `stream` so far, as bytes.
    public func data(_ stream: Stream) -> Data { FileManager.default.contents(atPath: output.file(stream.rawValue)) ?? Data() }

    private func text(_ stream: Stream) -> String { String(decoding: data(stream), as: UTF8.self) }

    /// Waits for it to end. Past `timeout` its group is killed and the test fails, naming
    /// the wait and showing its last output.
    public func wait(timeout: Duration = .seconds(120), for purpose: String? = nil,
                     sourceLocation: SourceLocation = #_sourceLocation) async -> Outcome {
        let (status, timedOut) = await end(within: timeout)
        if timedOut {
            Issue.record(Comment(rawValue: "\(name) did not exit within \(timeout)\(purpose.map { " (waiting for \($0))" } ?? ""): "
                                 + "its process group was killed\n\(lastLines())"), sourceLocation: sourceLocation)
        } else {
            reportDeadline(sourceLocation)
        }
        return Outcome(status: status.shellCode, stdout: stdoutSoFar, stderr: stderrSoFar, timedOut: timedOut)
    }

    /// Waits until a killed child is gone (SIGKILL takes milliseconds), at most 10 s,
    /// without holding a thread of the cooperative pool (the pool watch named the blocking
    /// wait this replaced).
    public func waitAfterKill() async { _ = await exit(within: .seconds(10)) }

    /// Waits for it to end within `timeout`, else kills its group; records nothing.
    func end(within timeout: Duration) async -> (status: ChildProcess.ExitStatus, timedOut: Bool) {
        if let status = await exit(within: timeout) { return (status, false) }
        killGroup()
        // SIGKILL ends any process but one stuck in the kernel; that is a failure too.
        return (await exit(within: .seconds(30)) ?? .signalled(SIGKILL), true)
    }

    /// Waits until `text` appears on `stream`. Past `timeout`, or when the program ends
    /// without printing it, the test fails, naming what was awaited and showing the last
    /// output. Returns whether it came.
    @discardableResult
    public func waitForOutput(_ text: String, on stream: Stream = .stderr, timeout: Duration = .seconds(60),
                              sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        await waitForOutput(on: stream, "'\(text)'", timeout: timeout, sourceLocation: sourceLocation) { $0.contains(text) }
    }

    /// Waits until what `stream` holds satisfies `condition` (described by `what` in the
    /// failure). As ``waitForOutput(_:on:timeout:sourceLocation:)``.
    @discardableResult
    public func waitForOutput(on stream: Stream = .stderr, _ what: String, timeout: Duration = .seconds(60),
                              sourceLocation: SourceLocation = #_sourceLocation, _ condition: @Sendable (String) -> Bool) async -> Bool {
        let found = await poll(timeout: timeout) { condition(self.text(stream)) || !self.isRunning }
        if condition(text(stream)) { return true }
        let why = found ? "it \(child.status.map { "\($0)" } ?? "ended") first" : "not within \(timeout)"
        Issue.record(Comment(rawValue: "waited for \(what) on the \(stream.rawValue) of \(name): \(why)\n\(lastLines())"), sourceLocation: sourceLocation)
        return false
    }

    /// The last lines it printed on each stream, for failure messages.
    public func lastLines(_ count: Int = 25) -> String {
        [Stream.stderr, .stdout].map { stream in
            let lines = text(stream).split(separator: "\n", omittingEmptySubsequences: false)
            let shown = lines.suffix(count).joined(separator: "\n")
            return "--- last \(min(count, lines.count)) of \(lines.count) lines of \(stream.rawValue) ---\n\(shown)"
        }.joined(separator: "\n")
    }

    private func exit(within timeout: Duration) async -> ChildProcess.ExitStatus? {
        let once = Once<ChildProcess.ExitStatus?>()
        return await withCheckedContinuation { continuation in
            once.resume = { continuation.resume(returning: $0) }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout.timeInterval) { once.fire(nil) }
            child.onExit { once.fire($0) }
        }
    }

    private func deadlinePassed() {
        guard child.isRunning else { return }
        state.withLock { $0.killedAtDeadline = true }
        killGroup()
    }

    private func reportDeadline(_ sourceLocation: SourceLocation) {
        guard state.withLock({ state -> Bool in
            defer { if state.killedAtDeadline { state.reported = true } }
            return state.killedAtDeadline && !state.reported
        }) else { return }
        Issue.record(Comment(rawValue: deadlineMessage()), sourceLocation: sourceLocation)
    }

    private func deadlineMessage() -> String {
        "\(name) was still running at its deadline (\(deadline) after it started): its process group was killed\n\(lastLines())"
    }
}

/// A continuation resumed once, by whichever of several events comes first.
private final class Once<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var done = false
    var resume: ((Value) -> Void)?

    func fire(_ value: Value) {
        lock.lock()
        guard !done, let resume else { lock.unlock(); return }
        done = true
        self.resume = nil
        lock.unlock()
        resume(value)
    }
}

/// Polls `condition` every few milliseconds until it holds or `timeout` passes; the last
/// check comes after the deadline, so a starved thread pool cannot turn a late wake-up
/// into a failure. A wait for a state, never a sleep that decides an outcome.
func poll(timeout: Duration, _ condition: @Sendable () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline && !Task.isCancelled {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return await condition()
}

extension Duration {
    /// The duration in seconds, for Dispatch.
    var timeInterval: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
