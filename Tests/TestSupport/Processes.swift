#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeSupport

/// What a finished helper program printed.
public struct ProgramOutput: Sendable {
    /// The exit status (128 + the signal for a program killed by one).
    public var status: Int32
    /// Standard output, as bytes.
    public var data: Data
    /// Standard output, as text.
    public var text: String { String(decoding: data, as: UTF8.self) }
}

/// Runs a program found on PATH and waits for it on a thread of its own, never on the
/// cooperative pool or Dispatch's shared threads: tests run in parallel on two cores, and
/// a blocked shared thread would skew every timing in the suite. Standard error goes to
/// /dev/null; the program inherits no descriptor but the standard three (tests open files
/// without O_CLOEXEC, and a child holding a copy keeps an unlinked file's space taken).
public func runProgram(_ arguments: [String], environment: [String: String] = [:], input: Data? = nil) async throws -> ProgramOutput {
    ignoreSIGPIPE()
    let completion = try await ChildProcess.run(arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                                                input: input)
    return ProgramOutput(status: completion.status.shellCode, data: completion.output)
}

/// A test helper could not do its part (a service did not start, a program is missing).
public struct TestSupportError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Runs `body` on `count` threads of their own (blocking calls stay off the cooperative
/// pool) and returns what each returned, in order.
public func onThreads<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) -> T) async -> [T] {
    await withTaskGroup(of: (Int, T).self) { group in
        for index in 0..<count {
            group.addTask {
                await withCheckedContinuation { continuation in
                    Thread { continuation.resume(returning: (index, body(index))) }.start()
                }
            }
        }
        var results: [(Int, T)] = []
        for await result in group { results.append(result) }
        return results.sorted { $0.0 < $1.0 }.map(\.1)
    }
}
