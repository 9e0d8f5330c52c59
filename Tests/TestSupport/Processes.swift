import Dispatch
import Foundation

/// What a finished helper program printed.
public struct ProgramOutput: Sendable {
    /// The exit status.
    public var status: Int32
    /// Standard output, as bytes.
    public var data: Data
    /// Standard output, as text.
    public var text: String { String(decoding: data, as: UTF8.self) }
}

/// Runs a program found on PATH and waits for it on a thread of its own, never on the
/// cooperative pool or Dispatch's shared threads: tests run in parallel on two cores, and
/// a blocked shared thread would skew every timing in the suite.
public func runProgram(_ arguments: [String], environment: [String: String] = [:]) async throws -> ProgramOutput {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            do {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = arguments
                if !environment.isEmpty {
                    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
                }
                let pipe = Pipe()
                process.standardOutput = pipe
                process.standardError = FileHandle.nullDevice
                try process.run()
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: ProgramOutput(status: process.terminationStatus, data: data))
            } catch {
                continuation.resume(throwing: error)
            }
        }.start()
    }
}
