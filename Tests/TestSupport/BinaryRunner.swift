#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A built executable of this package, next to the test bundle.
public func builtExecutable(_ name: String) -> String {
    var candidates: [String] = []
    if let executable = Bundle.main.executablePath {
        candidates.append(URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent(name).path)
    }
    candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name).path)
    candidates.append("\(repositoryRoot)/.build/debug/\(name)")
    for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    fatalError("the \(name) executable was not built; looked at \(candidates)")
}

/// The built `shutterpipe` executable, next to the test bundle.
public let shutterpipeBinary: String = builtExecutable("shutterpipe")


/// What a finished process left.
public struct Outcome: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    public var lines: [String] { stdout.split(separator: "\n").map(String.init) }
}

/// A running process with a pipe on its standard input.
public final class RunningProcess: @unchecked Sendable {
    public let process = Process()
    private let input = Pipe()
    private let outPath: String
    private let errPath: String

    public init(_ executable: String = shutterpipeBinary, _ arguments: [String], in directory: String,
         environment: [String: String] = [:]) throws {
        ignoreSIGPIPE()
        outPath = "\(directory)/.stdout-\(UUID().uuidString)"
        errPath = "\(directory)/.stderr-\(UUID().uuidString)"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = input
        process.standardOutput = FileHandle(forWritingAtPath: outPath)
        process.standardError = FileHandle(forWritingAtPath: errPath)
        try process.run()
    }

    public func send(_ text: String) {
        input.fileHandleForWriting.write(Data(text.utf8))
    }

    public func closeInput() {
        try? input.fileHandleForWriting.close()
    }

    public var stderrSoFar: String {
        (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
    }

    public var stdoutSoFar: String {
        (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
    }

    /// Waits for the process to end; kills it after `timeout` so no test can hang.
    public func wait(timeout: Duration = .seconds(20)) async -> Outcome {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        if process.isRunning {
            process.interrupt()
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        let outcome = Outcome(status: process.terminationStatus,
                              stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
                              stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
        try? FileManager.default.removeItem(atPath: outPath)
        try? FileManager.default.removeItem(atPath: errPath)
        return outcome
    }
}

/// Runs shutterpipe with `arguments`, feeding `input` and closing stdin.
public func shutterpipe(_ arguments: [String], input: String = "", in directory: String,
                 environment: [String: String] = [:], timeout: Duration = .seconds(20),
                 via launcher: String? = nil) async throws -> Outcome {
    let running = try RunningProcess(launcher ?? shutterpipeBinary, arguments, in: directory, environment: environment)
    running.send(input)
    running.closeInput()
    return await running.wait(timeout: timeout)
}

/// Writes a config into `folder` and returns its path.
public func writeConfig(_ yaml: String, in folder: TemporaryDirectory, name: String = "studio.yaml") throws -> String {
    let path = folder.file(name)
    try yaml.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}
