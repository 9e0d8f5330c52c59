#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation

extension ChildProcess {
    /// What a program run to its end left.
    public struct Completion: Sendable {
        /// How it ended.
        public var status: ExitStatus
        /// Whether it was killed for running past its timeout.
        public var timedOut: Bool
        /// Its standard output.
        public var output: Data
        /// Its standard error (empty unless captured).
        public var errorOutput: Data
    }

    /// Runs a program to its end and collects its output. Blocks: call it on a thread of
    /// your own (a ``BlockingQueue``), or use the `async` form.
    ///
    /// Past `timeout` the program is killed with SIGKILL, and with `processGroup`
    /// everything it started with it. Output is read until the program itself exits,
    /// then whatever it left in the pipes: a background child that keeps them open (a
    /// hook's `… &`) is not waited for, and what it writes later is not collected.
    ///
    /// - Parameters:
    ///   - input: written to its standard input, which is then closed; `nil` for /dev/null.
    ///   - captureErrors: collect standard error too (else it goes to /dev/null).
    public static func run(_ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
                           input: Data? = nil, captureErrors: Bool = false, timeout: Duration? = nil,
                           processGroup: Bool = false) throws(SystemError) -> Completion {
        let child = try ChildProcess(arguments, environment: environment, directory: directory,
                                     input: input == nil ? .null : .pipe, output: .pipe,
                                     error: captureErrors ? .pipe : .null, processGroup: processGroup)
        if let input {
            OwnedThread.start("shutterpipe input \(child.pid)") {
                try? child.write(input)
                child.closeInput()
            }
        }
        var collected: [Int32: Data] = [:]
        var open = [child.output, child.errorOutput].compactMap { $0 }
        let deadline = timeout.map { ContinuousClock.now + $0 }
        var timedOut = false
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var passesAfterExit = 0
        while !open.isEmpty {
            // Once the program has exited, everything it wrote is in the pipes: passes that
            // do not wait (timeout 0) read it, and the loop ends at the first that finds
            // nothing, or after 16 (a megabyte) if a background child keeps writing.
            let exited = !child.isRunning
            if exited {
                passesAfterExit += 1
                if passesAfterExit > 16 { break }
            }
            if let deadline, ContinuousClock.now >= deadline, !timedOut {
                timedOut = true
                if processGroup { child.signalGroup(SIGKILL) } else { child.signal(SIGKILL) }
            }
            var polled = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&polled, nfds_t(polled.count), exited ? 0 : 20)
            if ready < 0 && errno != EINTR { break }
            if exited && ready == 0 { break }
            for entry in polled where entry.revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(entry.fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    collected[entry.fd, default: Data()].append(contentsOf: buffer[0..<count])
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    open.removeAll { $0 == entry.fd }
                }
            }
        }
        if let deadline, !timedOut, child.isRunning {
            let left = deadline - ContinuousClock.now
            if left <= .zero || child.waitUntilExit(timeout: left) == nil {
                timedOut = true
                if processGroup { child.signalGroup(SIGKILL) } else { child.signal(SIGKILL) }
            }
        }
        let status = child.waitUntilExit()
        return Completion(status: status, timedOut: timedOut,
                          output: child.output.flatMap { collected[$0] } ?? Data(),
                          errorOutput: child.errorOutput.flatMap { collected[$0] } ?? Data())
    }

    /// ``run(_:environment:directory:input:captureErrors:timeout:processGroup:)`` on a
    /// thread of its own, so no cooperative thread waits for the program.
    public static func run(_ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
                           input: Data? = nil, captureErrors: Bool = false, timeout: Duration? = nil,
                           processGroup: Bool = false) async throws(SystemError) -> Completion {
        let result: Result<Completion, SystemError> = await withCheckedContinuation { continuation in
            OwnedThread.start("shutterpipe run \(arguments.first ?? "")") {
                continuation.resume(returning: Result { () throws(SystemError) -> Completion in
                    try run(arguments, environment: environment, directory: directory, input: input,
                            captureErrors: captureErrors, timeout: timeout, processGroup: processGroup)
                })
            }
        }
        return try result.get()
    }
}
