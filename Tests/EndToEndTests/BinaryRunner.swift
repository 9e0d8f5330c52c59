#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport

/// The built `shutterpipe` executable, next to the test bundle.
let shutterpipeBinary: String = {
    var candidates: [String] = []
    if let executable = Bundle.main.executablePath {
        candidates.append(URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("shutterpipe").path)
    }
    candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("shutterpipe").path)
    candidates.append("\(repositoryRoot)/.build/debug/shutterpipe")
    for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    fatalError("the shutterpipe executable was not built; looked at \(candidates)")
}()

/// What a finished process left.
struct Outcome {
    var status: Int32
    var stdout: String
    var stderr: String
    var lines: [String] { stdout.split(separator: "\n").map(String.init) }
}

/// A running process with a pipe on its standard input.
final class RunningProcess: @unchecked Sendable {
    let process = Process()
    private let input = Pipe()
    private let outPath: String
    private let errPath: String

    init(_ executable: String = shutterpipeBinary, _ arguments: [String], in directory: String,
         environment: [String: String] = [:]) throws {
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

    func send(_ text: String) {
        input.fileHandleForWriting.write(Data(text.utf8))
    }

    func closeInput() {
        try? input.fileHandleForWriting.close()
    }

    var stdoutSoFar: String {
        (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
    }

    /// Waits for the process to end; kills it after `timeout` so no test can hang.
    func wait(timeout: Duration = .seconds(20)) async -> Outcome {
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
func shutterpipe(_ arguments: [String], input: String = "", in directory: String,
                 environment: [String: String] = [:], timeout: Duration = .seconds(20),
                 via launcher: String? = nil) async throws -> Outcome {
    let running = try RunningProcess(launcher ?? shutterpipeBinary, arguments, in: directory, environment: environment)
    running.send(input)
    running.closeInput()
    return await running.wait(timeout: timeout)
}

/// Writes a config into `folder` and returns its path.
func writeConfig(_ yaml: String, in folder: TemporaryDirectory, name: String = "studio.yaml") throws -> String {
    let path = folder.file(name)
    try yaml.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}
