#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeSupport
import Testing

/// A built executable of this package, next to the test bundle. A missing one is an
/// error that names where it was looked for: the test that needs it fails, the others run.
public func builtExecutable(_ name: String) throws -> String {
    var candidates: [String] = []
    if let executable = Bundle.main.executablePath {
        candidates.append(URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent(name).path)
    }
    candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name).path)
    candidates.append("\(repositoryRoot)/.build/debug/\(name)")
    for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    throw TestSupportError("the \(name) executable was not built (run `swift build --build-tests`); looked at \(candidates.joined(separator: ", "))")
}

/// The built `shutterpipe` executable, next to the test bundle.
public func shutterpipeBinary() throws -> String {
    try builtExecutable("shutterpipe")
}

/// What a finished process left.
public struct Outcome: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    public var lines: [String] { stdout.split(separator: "\n").map(String.init) }
}

/// A running program with a pipe on its standard input and its output in files, so a
/// test can read what it printed so far at any time.
public final class RunningProcess: Sendable {
    private let child: ChildProcess
    private let program: String
    private let outPath: String
    private let errPath: String

    /// Starts `shutterpipe` with `arguments` in `directory`.
    public convenience init(_ arguments: [String], in directory: String, environment: [String: String] = [:]) throws {
        try self.init(program: try shutterpipeBinary(), arguments, in: directory, environment: environment)
    }

    /// Starts `program` with `arguments` in `directory`.
    public init(program: String, _ arguments: [String], in directory: String, environment: [String: String] = [:]) throws {
        ignoreSIGPIPE()
        self.program = program
        outPath = "\(directory)/.stdout-\(UUID().uuidString)"
        errPath = "\(directory)/.stderr-\(UUID().uuidString)"
        child = try ChildProcess([program] + arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                                 directory: directory, input: .pipe, output: .file(outPath), error: .file(errPath))
    }

    /// The process ID.
    public var pid: pid_t { child.pid }

    /// Whether it still runs.
    public var isRunning: Bool { child.isRunning }

    /// Sends `signal` to it.
    public func signal(_ signal: Int32) { child.signal(signal) }

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
            Issue.record("\((program as NSString).lastPathComponent) did not take input (\(error.reason)); \(status); stderr: \(stderrSoFar.suffix(2000))",
                         sourceLocation: sourceLocation)
            return false
        }
    }

    /// Closes its standard input: it sees end of input.
    public func closeInput() {
        child.closeInput()
    }

    /// What it printed on standard error so far.
    public var stderrSoFar: String {
        (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
    }

    /// What it printed on standard output so far.
    public var stdoutSoFar: String {
        (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
    }

    /// Waits for it to end; kills it after `timeout` so no test can hang.
    public func wait(timeout: Duration = .seconds(20)) async -> Outcome {
        let ended = await withTaskGroup(of: ChildProcess.ExitStatus?.self) { group in
            group.addTask { await self.child.exitStatus() }
            group.addTask { try? await Task.sleep(for: timeout); return nil }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        let status: ChildProcess.ExitStatus
        if let ended {
            status = ended
        } else {
            child.signal(SIGKILL)
            status = await child.exitStatus()
        }
        let outcome = Outcome(status: status.shellCode, stdout: stdoutSoFar, stderr: stderrSoFar)
        try? FileManager.default.removeItem(atPath: outPath)
        try? FileManager.default.removeItem(atPath: errPath)
        return outcome
    }
}

/// Runs shutterpipe with `arguments`, feeding `input` and closing stdin.
public func shutterpipe(_ arguments: [String], input: String = "", in directory: String,
                        environment: [String: String] = [:], timeout: Duration = .seconds(20),
                        via launcher: String? = nil) async throws -> Outcome {
    let running = try RunningProcess(program: try launcher ?? shutterpipeBinary(), arguments, in: directory, environment: environment)
    if !input.isEmpty { running.send(input) }
    running.closeInput()
    return await running.wait(timeout: timeout)
}

/// Writes a config into `folder` and returns its path.
public func writeConfig(_ yaml: String, in folder: TemporaryDirectory, name: String = "studio.yaml") throws -> String {
    let path = folder.file(name)
    try yaml.write(toFile: path, atomically: false, encoding: .utf8)
    return path
}
