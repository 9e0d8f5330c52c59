#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CShutterPipeSupport
import Dispatch
import Foundation
import Synchronization

/// A program started with `posix_spawnp`, reaped by a thread of its own.
///
/// Not Foundation's `Process`: with many programs started at once, its wait could miss
/// the end of one that exited at once (a zombie nobody reaped, and a test suite that
/// hung). Here every child has a reaper thread blocked in `waitpid` from the start, and
/// every way of waiting (``waitUntilExit()``, ``waitUntilExit(timeout:)``,
/// ``exitStatus()``, ``onExit(_:)``) reads what it recorded.
///
/// The child gets only its three standard descriptors and those it is `passing`
/// (everything else is closed), the default SIGPIPE disposition and an empty signal mask,
/// whatever the parent ignores or blocks; with `processGroup`, a group of its own, so
/// ``signalGroup(_:)`` reaches whatever it starts too.
public final class ChildProcess: Sendable {
    /// Where a standard descriptor of the child goes.
    public enum Redirection: Sendable, Equatable {
        /// `/dev/null`.
        case null
        /// A pipe to this process: ``input``, ``output`` or ``errorOutput``.
        case pipe
        /// The parent's own descriptor.
        case inherit
        /// A file, created if missing; output is appended.
        case file(String)
    }

    /// The child's process ID.
    public let pid: pid_t
    /// The write end of the child's standard input, with ``Redirection/pipe``.
    public let input: Int32?
    /// The read end of the child's standard output, with ``Redirection/pipe``.
    public let output: Int32?
    /// The read end of the child's standard error, with ``Redirection/pipe``.
    public let errorOutput: Int32?
    private let reaper: Reaper
    private let open = Mutex<Set<Int32>>([])

    /// Starts `arguments[0]` (looked up on PATH) with `arguments`.
    ///
    /// - Parameters:
    ///   - environment: the whole environment; `nil` inherits this process's.
    ///   - directory: the working directory; `nil` keeps this process's.
    ///   - processGroup: puts the child in a process group of its own.
    ///   - passing: descriptors the child gets as 3, 4, … (a socket to talk to it, say).
    public init(_ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
                input: Redirection = .null, output: Redirection = .null, error: Redirection = .null,
                processGroup: Bool = false, passing: [Int32] = []) throws(SystemError) {
        guard let program = arguments.first, !program.isEmpty else { throw SystemError("start a program: none named", code: EINVAL) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var ours: [Int32?] = [nil, nil, nil]
        var theirs: [Int32] = []
        defer { theirs.forEach { _ = Glibc.close($0) } }
        for (target, redirection) in [input, output, error].enumerated() {
            let descriptor = Int32(target)
            switch redirection {
            case .null:
                posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
            case .inherit:
                break
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, descriptor, path,
                                                 descriptor == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_APPEND, 0o644)
            case .pipe:
                let (reader, writer) = try Self.pipe()
                let (mine, child) = descriptor == 0 ? (writer, reader) : (reader, writer)
                ours[target] = mine
                theirs.append(child)
                posix_spawn_file_actions_adddup2(&actions, child, descriptor)
            }
        }
        // Copies above every target number first, so that no dup2 overwrites a descriptor
        // still to be passed.
        var copies: [Int32] = []
        defer { copies.forEach { _ = Glibc.close($0) } }
        for descriptor in passing {
            let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 3 + Int32(passing.count))
            guard copy >= 0 else { throw SystemError("pass descriptor \(descriptor)") }
            copies.append(copy)
        }
        for (index, copy) in copies.enumerated() { posix_spawn_file_actions_adddup2(&actions, copy, 3 + Int32(index)) }
        shutterpipe_spawn_close_from(&actions, 3 + Int32(passing.count))
        if let directory { shutterpipe_spawn_chdir(&actions, directory) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var flags = Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        if processGroup { flags |= Int32(POSIX_SPAWN_SETPGROUP) }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        posix_spawnattr_setpgroup(&attributes, 0)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)

        let argv = arguments.map { strdup($0) } + [nil]
        let pairs = environment.map { $0.map { "\($0.key)=\($0.value)" } } ?? ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
        let envp = pairs.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, program, &actions, &attributes, argv, envp)
        guard spawned == 0 else {
            ours.compactMap { $0 }.forEach { _ = Glibc.close($0) }
            throw SystemError("cannot start \(program)", code: spawned)
        }
        self.pid = pid
        (self.input, self.output, self.errorOutput) = (ours[0], ours[1], ours[2])
        reaper = Reaper(pid: pid)
        open.withLock { $0 = Set(ours.compactMap { $0 }) }
    }

    deinit {
        open.withLock { $0 }.forEach { _ = Glibc.close($0) }
    }

    // MARK: Waiting

    /// How it ended, or `nil` while it runs.
    public var status: ChildProcess.ExitStatus? { reaper.status }

    /// Whether it still runs.
    public var isRunning: Bool { reaper.status == nil }

    /// Blocks until it exits. For threads of their own, never the cooperative pool.
    @discardableResult
    public func waitUntilExit() -> ChildProcess.ExitStatus { reaper.wait(timeout: nil)! }

    /// Blocks until it exits or `timeout` passes (`nil` then).
    public func waitUntilExit(timeout: Duration) -> ChildProcess.ExitStatus? { reaper.wait(timeout: timeout) }

    /// Waits until it exits, without blocking a thread.
    public func exitStatus() async -> ChildProcess.ExitStatus {
        await withCheckedContinuation { continuation in reaper.onExit { continuation.resume(returning: $0) } }
    }

    /// Calls `body` once it exits (at once if it has), on the reaper's thread.
    public func onExit(_ body: @escaping @Sendable (ChildProcess.ExitStatus) -> Void) { reaper.onExit(body) }

    // MARK: Signals and descriptors

    /// Sends `signal` to the child.
    public func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// Sends `signal` to the child's process group (started with `processGroup`).
    public func signalGroup(_ signal: Int32) {
        kill(-pid, signal)
    }

    /// Writes to the child's standard input. EPIPE, a child that stopped reading or died,
    /// is an error, never a signal.
    public func write<Bytes: Collection>(_ bytes: Bytes) throws(SystemError) where Bytes.Element == UInt8 {
        guard let input, open.withLock({ $0.contains(input) }) else { throw SystemError("write to \(pid)'s input: already closed", code: EBADF) }
        try DescriptorIO.writeAll(bytes, to: input)
    }

    /// Closes the child's standard input, so it sees end of input.
    public func closeInput() {
        guard let input else { return }
        if open.withLock({ $0.remove(input) }) != nil { Glibc.close(input) }
    }

    private static func pipe() throws(SystemError) -> (reader: Int32, writer: Int32) {
        var ends: [Int32] = [-1, -1]
        guard shutterpipe_pipe_cloexec(&ends) == 0 else { throw SystemError("pipe") }
        // Above 2, so that no dup2 onto a standard descriptor is a no-op that keeps
        // close-on-exec (a process whose standard input was closed gets 0 from pipe()).
        return (try raised(ends[0]), try raised(ends[1]))
    }

    private static func raised(_ descriptor: Int32) throws(SystemError) -> Int32 {
        guard descriptor <= 2 else { return descriptor }
        let moved = fcntl(descriptor, F_DUPFD_CLOEXEC, 3)
        Glibc.close(descriptor)
        guard moved >= 0 else { throw SystemError("fcntl") }
        return moved
    }
}

/// Reaps one child on a thread of its own and tells every waiter.
private final class Reaper: Sendable {
    private let exited = DispatchGroup()
    private let state = Mutex<(status: ChildProcess.ExitStatus?, waiting: [@Sendable (ChildProcess.ExitStatus) -> Void])>((nil, []))

    init(pid: pid_t) {
        exited.enter()
        OwnedThread.start("shutterpipe reaper \(pid)") { [self] in
            var status: Int32 = 0
            var result: pid_t
            repeat { result = waitpid(pid, &status, 0) } while result < 0 && errno == EINTR
            let ended = result == pid ? ChildProcess.ExitStatus(waitStatus: status) : .exited(-1)
            let waiting = state.withLock { state -> [@Sendable (ChildProcess.ExitStatus) -> Void] in
                state.status = ended
                defer { state.waiting = [] }
                return state.waiting
            }
            exited.leave()
            waiting.forEach { $0(ended) }
        }
    }

    var status: ChildProcess.ExitStatus? { state.withLock { $0.status } }

    func wait(timeout: Duration?) -> ChildProcess.ExitStatus? {
        if let timeout {
            guard exited.wait(timeout: max(.zero, timeout).fromNow) == .success else { return nil }
        } else {
            exited.wait()
        }
        return status
    }

    func onExit(_ body: @escaping @Sendable (ChildProcess.ExitStatus) -> Void) {
        let now = state.withLock { state -> ChildProcess.ExitStatus? in
            if let status = state.status { return status }
            state.waiting.append(body)
            return nil
        }
        if let now { body(now) }
    }
}
