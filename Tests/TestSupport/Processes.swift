#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ShutterPipeSupport

/// What a finished helper program printed.
public struct ProgramOutput: Sendable {
    /// The exit status (128 + the signal for a program killed by one).
    public var status: Int32
    /// Standard output, as bytes.
    public var data: Data
    /// Standard error, as text (for messages).
    public var errors: String = ""
    /// Standard output, as text.
    public var text: String { String(decoding: data, as: UTF8.self) }
}

/// Runs a program (a path, or a name looked up on PATH) to its end as a
/// ``RunningProcess``: in a process group of its own, waited for without holding a
/// thread, its input (if any) written on a thread of its own. It inherits no descriptor
/// but the standard three (tests open files without O_CLOEXEC, and a child holding a copy
/// keeps an unlinked file's space taken).
///
/// Past `timeout` its group is killed and this throws, naming the command and showing
/// its last output: no helper program can hang a test.
public func runProgram(_ arguments: [String], environment: [String: String] = [:], input: Data? = nil,
                       in directory: String? = nil, timeout: Duration = .seconds(120)) async throws -> ProgramOutput {
    guard let program = arguments.first else { throw TestSupportError("runProgram: no program named") }
    // Started from a queue of its own: a spawn starts a reaper thread, and on a loaded
    // machine pthread_create has waited seconds for glibc's stack lock, which on a
    // cooperative thread stalls every test beside it (the pool watch caught one).
    let process = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<RunningProcess, any Error>) in
        spawning.async {
            continuation.resume(with: Result {
                try RunningProcess(program: program, Array(arguments.dropFirst()), in: directory, environment: environment,
                                   deadline: timeout + .seconds(60), input: input == nil ? .null : .pipe)
            })
        }
    }
    if let input {
        let writer = Thread {
            _ = process.write(input)
            process.closeInput()
        }
        writer.name = "shutterpipe test input"
        writer.start()
    }
    let (status, timedOut) = await process.end(within: timeout)
    guard !timedOut else {
        throw TestSupportError("\(process.name) did not finish within \(timeout): its process group was killed\n\(process.lastLines())")
    }
    return ProgramOutput(status: status.shellCode, data: process.data(.stdout), errors: String(decoding: process.data(.stderr), as: UTF8.self))
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

/// A loopback TCP port held for the life of this value and never listened on: a
/// connection to it is refused at once, and no other test's server can take it meanwhile
/// (a port freed by stopping a server can be handed to the next one started beside it).
public final class RefusingPort: Sendable {
    public let port: UInt16
    private let descriptor: Int32

    public init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard descriptor >= 0, bound else {
            if descriptor >= 0 { close(descriptor) }
            throw TestSupportError("cannot hold a loopback port: \(String(cString: strerror(errno)))")
        }
        self.descriptor = descriptor
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(descriptor) }
}

/// Where ``runProgram(_:environment:input:in:timeout:)`` starts its processes: never on a
/// cooperative thread.
let spawning = DispatchQueue(label: "shutterpipe.test.spawning")
