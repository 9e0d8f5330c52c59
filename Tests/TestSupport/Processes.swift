#if canImport(Glibc)
import Glibc
#endif
import CLinux
import Foundation

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
/// a blocked shared thread would skew every timing in the suite.
///
/// posix_spawnp and waitpid, not Foundation's Process: with many programs started at once,
/// Process.waitUntilExit could miss the end of one that exits at once (a `mount` left a
/// zombie nobody reaped, and the suite hung).
public func runProgram(_ arguments: [String], environment: [String: String] = [:]) async throws -> ProgramOutput {
    ignoreSIGPIPE()
    return try await withCheckedThrowingContinuation { continuation in
        Thread {
            continuation.resume(with: Result { try spawnAndWait(arguments, environment: environment) })
        }.start()
    }
}

private func spawnAndWait(_ arguments: [String], environment: [String: String]) throws -> ProgramOutput {
    guard let program = arguments.first else { throw FakeCameraError("runProgram: no program named") }
    var descriptors: [Int32] = [-1, -1]
    guard pipe(&descriptors) == 0 else { throw FakeCameraError("runProgram: pipe: \(String(cString: strerror(errno)))") }
    let (reader, writer) = (descriptors[0], descriptors[1])
    _ = fcntl(reader, F_SETFD, FD_CLOEXEC)
    _ = fcntl(writer, F_SETFD, FD_CLOEXEC)  // dup2 onto 1 below clears it for the child's copy

    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, writer, 1)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    // Nothing else: tests open files without O_CLOEXEC (Data.write), and a child holding a
    // copy keeps an unlinked file's space taken (the storage case's filler stayed "full").
    sp_spawn_close_from(&actions, 3)

    let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { (argv + envp).forEach { free($0) } }

    var pid: pid_t = 0
    let spawned = posix_spawnp(&pid, program, &actions, nil, argv, envp)
    close(writer)
    guard spawned == 0 else {
        close(reader)
        throw FakeCameraError("runProgram: cannot start \(program): \(String(cString: strerror(spawned)))")
    }
    var output = Data()
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { break }
        output.append(contentsOf: buffer[0..<count])
    }
    close(reader)
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let signal = status & 0x7F
    return ProgramOutput(status: signal == 0 ? (status >> 8) & 0xFF : 128 + signal, data: output)
}
