#if canImport(Glibc)
import Glibc
#endif
import CTestSupport
import Foundation
import ShutterPipeSupport
import Synchronization

// The pool watch over the whole suite (issue 44). On this toolchain the cooperative pool
// is as wide as the machine has cores (2 here) and never grows, so one test that blocks a
// pool thread (a semaphore, a child's exit, a read, a sleep that is not Task.sleep)
// starves every in-process test beside it: they fail with deadlines that are not theirs,
// and the one that blocked passes. The watch names it instead.
//
// A thread of its own (started as the test process loads, by Tests/CTestSupport/
// pool_watch.c) sends the pool a probe every quarter of a second, at the tests' priority
// (each priority has threads of its own), and a block to Dispatch's global queue. Jobs
// are short, so a probe waits long only when every thread there is held by one job. When
// one has waited `SHUTTERPIPE_TEST_POOL_LIMIT` seconds (default 3), the watch reads the
// stack of each thread running such work (a blocked thread's stack pointer is in /proc;
// the words above it that point into code are its callers, and some stale ones:
// libdispatch's threads block every signal, so a signal cannot ask them), symbolises the
// addresses with the toolchain's llvm-symbolizer and swift-demangle, and prints them on
// stderr between lines "shutterpipe pool watch: …". scripts/test-runner counts each such
// report as a failure and names the test functions in its frames.
// SHUTTERPIPE_TEST_POOL_WATCH=off turns the watch off.

/// The watch's entry point: called once, on the watch's own thread, never returns while
/// the process runs.
@_cdecl("shutterpipe_test_pool_watch_run")
public func poolWatchRun() {
    let environment = ProcessInfo.processInfo.environment
    guard environment["SHUTTERPIPE_TEST_POOL_WATCH"] != "off" else { return }
    let limit = Double(environment["SHUTTERPIPE_TEST_POOL_LIMIT"] ?? "") ?? 3
    PoolWatchAll(limit: .milliseconds(Int(limit * 1000))).watch()
}

private final class PoolWatchAll: Sendable {
    let limit: Duration
    /// The pool's threads, as the probes found them.
    let poolThreads = Mutex<Set<pid_t>>([])
    /// Stacks already reported: a thread blocked for long is reported once.
    private let reported = Mutex<Set<String>>([])

    init(limit: Duration) { self.limit = limit }

    /// The two places every in-process test depends on: the cooperative pool (every task)
    /// and Dispatch's global queue, whose threads fire every `Task.sleep` and deadline
    /// timer on Linux (libdispatch adds a thread there only about once a second while
    /// those it has are blocked).
    enum Place: Sendable {
        case pool, dispatch

        var words: String {
            switch self {
            case .pool: return "no job of the cooperative pool could start"
            case .dispatch: return "no block of Dispatch's global queue (which fires every Task.sleep and timer) could start"
            }
        }

        /// Whether a thread's stack runs work of this place.
        func runs(_ stack: [String]) -> Bool {
            let swiftJob = stack.contains { $0.contains("swift_job_run") || $0.contains("runJobInEstablishedExecutorContext") }
            switch self {
            case .pool: return swiftJob
            case .dispatch:
                return !swiftJob && stack.contains { $0.contains("_dispatch_call_block_and_release") || $0.contains("_dispatch_client_callout") }
                    && !stack.contains { $0.contains("_dispatch_mgr_thread") }
            }
        }
    }

    func watch() {
        pause(.seconds(1))
        while true {
            pause(.milliseconds(250))
            let sent = ContinuousClock.now
            let pool = ProbeBox(), dispatch = ProbeBox()
            Task.detached { [self] in
                poolThreads.withLock { _ = $0.insert(shutterpipe_test_thread_id()) }
                pool.ran.store(true, ordering: .releasing)
            }
            DispatchQueue.global().async { dispatch.ran.store(true, ordering: .releasing) }
            func bothRan() -> Bool { pool.ran.load(ordering: .acquiring) && dispatch.ran.load(ordering: .acquiring) }
            while !bothRan() && ContinuousClock.now - sent < limit { pause(.milliseconds(5)) }
            guard !bothRan() else { continue }
            if !pool.ran.load(ordering: .acquiring) { report(.pool, waited: ContinuousClock.now - sent) }
            if !dispatch.ran.load(ordering: .acquiring) { report(.dispatch, waited: ContinuousClock.now - sent) }
            // Once a stall is reported, wait for its end before probing again.
            while !bothRan() { pause(.milliseconds(20)) }
        }
    }

    private func report(_ place: Place, waited: Duration) {
        var text = ""
        for thread in Self.candidates(known: poolThreads.withLock { $0 }) {
            let frames = StackScan.returnAddresses(of: thread)
            guard !frames.isEmpty else { continue }
            let state = Self.state(of: thread)
            // Functions once each, in stack order (a scan finds a caller's address again in
            // its locals).
            var seen = Set<String>()
            let all = Symboliser.lines(frames).filter { seen.insert($0).inserted }
            // Only threads running that place's work (both use threads of the same name).
            guard place.runs(all) else { continue }
            let shown = all.prefix { !$0.contains("runJobInEstablishedExecutorContext") && !$0.contains("swift_job_run") && !$0.contains("_dispatch_client_callout") && !$0.contains("_dispatch_call_block_and_release") }
                .filter { $0 != "??" }.prefix(40)
            // A thread waiting inside pthread_create (glibc's lock on its cache of stacks)
            // was making a thread, which every helper does from the pool (a child's reaper,
            // a BlockingQueue): not a wait any test chose. Under a build beside the suite the
            // kernel can stall that lock for seconds (run 2 of test-steady, 2026-12-05).
            guard !shown.prefix(3).contains(where: { $0.hasPrefix("pthread_create") || $0.contains("allocatestack") }) else { continue }
            let stack = shown.joined(separator: "\n")
            guard reported.withLock({ $0.insert(stack).inserted }) else { continue }
            text += "  thread \(thread) (\(state)):\n" + shown.map { "    \($0)" }.joined(separator: "\n") + "\n"
        }
        guard !text.isEmpty else { return }
        let seconds = Double(waited.components.seconds) + Double(waited.components.attoseconds) / 1e18
        let message = "shutterpipe pool watch: \(place.words) for \(String(format: "%.1f", seconds)) s; what holds its threads:\n" + text + "shutterpipe pool watch: end\n"
        FileHandle.standardError.write(Data(message.utf8))
    }

    /// The threads that may be the pool's: those a probe ran on, and those named as
    /// libdispatch names its root queues' threads ("com.apple.root.default-qos", of which
    /// the kernel keeps the last 15 characters).
    private static func candidates(known: Set<pid_t>) -> [pid_t] {
        var threads = known
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [] {
            guard let thread = pid_t(entry),
                  let name = procFile("/proc/self/task/\(entry)/comm"),
                  name.contains("qos") else { continue }
            threads.insert(thread)
        }
        return threads.sorted()
    }

    /// "sleeping", "running" and the like, from /proc.
    private static func state(of thread: pid_t) -> String {
        guard let stat = procFile("/proc/self/task/\(thread)/stat"),
              let close = stat.lastIndex(of: ")") else { return "state unknown" }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        switch fields.first {
        case "S", "D": return "blocked"
        case "R": return "computing"
        case let other?: return "state \(other)"
        case nil: return "state unknown"
        }
    }

    private func pause(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var time = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        nanosleep(&time, nil)
    }
}

private final class ProbeBox: Sendable {
    let ran = Atomic<Bool>(false)
}

/// A file of /proc, read to its end (its size says 0, and String(contentsOfFile:) stops
/// at the first chunk).
private func procFile(_ path: String) -> String? {
    (try? DescriptorIO.readFile(path)).map { String(decoding: $0, as: UTF8.self) }
}

/// What a blocked thread's stack holds.
private enum StackScan {
    /// The thread's program counter, then each word between its stack pointer and the end
    /// of its stack (at most 256 KB) that points into loaded code. Empty when the thread
    /// is not in a system call (computing: its registers are not in /proc).
    static func returnAddresses(of thread: pid_t) -> [UnsafeMutableRawPointer] {
        // "NR ARG1 … ARG6 SP PC" while in a system call; "running" or "-1 SP PC" otherwise.
        guard let syscall = procFile("/proc/self/task/\(thread)/syscall") else { return [] }
        let fields = syscall.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count >= 3, let sp = UInt(fields[fields.count - 2].dropFirst(2), radix: 16),
              let pc = UInt(fields[fields.count - 1].dropFirst(2), radix: 16), sp != 0 else { return [] }
        var code: [ClosedRange<UInt>] = []
        var stackEnd: UInt = 0
        let maps = procFile("/proc/self/maps") ?? ""
        for line in maps.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 5)
            guard parts.count >= 2 else { continue }
            let range = parts[0].split(separator: "-")
            guard range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16) else { continue }
            if parts[1].hasPrefix("r-x") { code.append(start...(end - 1)) }
            if parts[1].hasPrefix("rw") && start <= sp && sp < end { stackEnd = end }
        }
        guard stackEnd > sp else { return [] }

        var found: [UnsafeMutableRawPointer] = []
        if let pointer = UnsafeMutableRawPointer(bitPattern: pc) { found.append(pointer) }
        var address = sp & ~UInt(7)
        let last = min(stackEnd, sp + 256 * 1024) - 8
        while address <= last {
            let word = UnsafePointer<UInt>(bitPattern: address)!.pointee
            if code.contains(where: { $0.contains(word) }), let pointer = UnsafeMutableRawPointer(bitPattern: word) { found.append(pointer) }
            address += 8
        }
        return found
    }
}

/// Return addresses to "function (file:line)" lines, through the toolchain's tools.
private enum Symboliser {
    static func lines(_ frames: [UnsafeMutableRawPointer]) -> [String] {
        var queries: [String] = []
        for frame in frames {
            var file: UnsafePointer<CChar>?
            var base: UInt = 0
            // The return address points after the call: one byte back is inside it.
            guard shutterpipe_test_frame_module(frame, &file, &base) != 0, let file else { continue }
            let offset = UInt(bitPattern: frame) - base - 1
            queries.append("\"\(String(cString: file))\" 0x\(String(offset, radix: 16))")
        }
        guard let symbolizer = tool("llvm-symbolizer"), let demangler = tool("swift-demangle"),
              let symbolised = run(symbolizer, ["--inlining=false", "--functions=linkage"], input: queries.joined(separator: "\n") + "\n"),
              let demangled = run(demangler, ["--simplified"], input: symbolised) else {
            return frames.map { "\($0)" }
        }
        // llvm-symbolizer answers each query with two lines (function, file:line) and a blank.
        let answers = demangled.components(separatedBy: "\n\n").map { $0.split(separator: "\n").map(String.init) }
        return answers.compactMap { lines in
            guard let function = lines.first, function != "??" else { return lines.isEmpty ? nil : "??" }
            let place = lines.dropFirst().first.map { ($0 as NSString).lastPathComponent } ?? ""
            return "\(function) (\(place))"
        }
    }

    /// The tool beside the `swift` on PATH (the toolchain's), or on PATH itself.
    private static func tool(_ name: String) -> String? {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        for folder in path {
            let swift = "\(folder)/swift"
            guard FileManager.default.isExecutableFile(atPath: swift) else { continue }
            let beside = URL(fileURLWithPath: swift).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        }
        return path.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    private static func run(_ program: String, _ arguments: [String], input: String) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        // The output can be larger than a pipe holds: read it while writing, on this thread
        // after the write (the input is small enough for the pipe).
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try? stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: output, as: UTF8.self)
    }
}
