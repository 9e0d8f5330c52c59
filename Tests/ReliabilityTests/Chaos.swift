#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeFixtures
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization
import TestSupport
import Testing

/// The knobs every fault case shares: how big a run is, where its randomness comes from,
/// and where its figures go.
///
/// - `SHUTTERPIPE_CHAOS=full` runs the full counts (`scripts/chaos` sets it); otherwise
///   the counts are small enough for CI on two cores.
/// - `SHUTTERPIPE_CHAOS_SEED=N` replays a run: every case derives its generator from it,
///   and every failure message names the seed.
/// - `SHUTTERPIPE_CHAOS_REPORT=FILE` appends each case's figures there as JSON lines;
///   `scripts/chaos` turns them into the tables of docs/reliability.md.
enum Chaos {
    static let environment = ProcessInfo.processInfo.environment
    static let full = environment["SHUTTERPIPE_CHAOS"] == "full"
    static let seed: UInt64 = environment["SHUTTERPIPE_CHAOS_SEED"].flatMap { UInt64($0) } ?? 20261201

    /// `ci` in the default run, `full` under `SHUTTERPIPE_CHAOS=full`.
    static func count(ci: Int, full: Int) -> Int { self.full ? full : ci }

    /// A generator for one case: the run's seed mixed with the case's name, so cases do
    /// not share a stream and each can be replayed alone.
    static func random(_ name: String) -> SeededRandom {
        SeededRandom(seed: name.utf8.reduce(seed) { ($0 &* 0x100000001B3) ^ UInt64($1) })
    }

    private static let reportLock = Mutex(())

    /// Records the figures of a case (always printed; written to the report file if set).
    static func record(_ name: String, _ figures: [String: any Sendable]) {
        var object = figures.mapValues { value -> Any in value }
        object["case"] = name
        object["seed"] = seed
        object["scale"] = full ? "full" : "ci"
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        let line = String(decoding: data, as: UTF8.self)
        print("chaos figures: \(line)")
        guard let path = environment["SHUTTERPIPE_CHAOS_REPORT"] else { return }
        reportLock.withLock { _ in
            let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { return }
            try? DescriptorIO.writeAll(Array((line + "\n").utf8), to: descriptor)
            close(descriptor)
        }
    }
}

/// What the kernel says about a running process.
struct ProcessStats {
    /// Resident memory now, and its peak, in KiB.
    var residentKiB: Int
    var peakKiB: Int
    /// Open file descriptors.
    var descriptors: Int

    init?(_ pid: pid_t) {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        func field(_ name: String) -> Int {
            status.split(separator: "\n").first { $0.hasPrefix(name) }
                .flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") } ?? 0
        }
        residentKiB = field("VmRSS:")
        peakKiB = field("VmHWM:")
        descriptors = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).count
    }
}

/// The median of `values` (0 for none).
func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// Whether `data` is a whole JPEG: starts with SOI, and its segments lead to a scan that
/// ends with EOI. A file cut short or with a torn header fails.
func isWholeJPEG(_ data: Data) -> Bool {
    let bytes = [UInt8](data)
    guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return false }
    guard bytes[bytes.count - 2] == 0xFF, bytes[bytes.count - 1] == 0xD9 else { return false }
    var index = 2
    while index + 4 <= bytes.count {
        guard bytes[index] == 0xFF else { return false }
        let marker = bytes[index + 1]
        if marker == 0xDA { return true }  // start of scan: the rest is entropy-coded data up to EOI
        let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
        guard length >= 2 else { return false }
        index += 2 + length
    }
    return false
}

/// The answers a socket client got, by request id.
func answersByID(_ replies: [[String: Any]]) -> [Int: [[String: Any]]] {
    Dictionary(grouping: replies.filter { $0["id"] != nil }) { $0["id"] as? Int ?? -1 }
}

/// The milliseconds a reply reports.
func replyMilliseconds(_ reply: [String: Any]) -> Double {
    (reply["ms"] as? Double) ?? Double(reply["ms"] as? Int ?? 0)
}

/// A `shutterpipe run` with a socket trigger, ready when it accepts a connection.
struct SocketSession {
    let process: RunningProcess
    let socket: String
    var pid: pid_t { process.pid }

    /// Starts `shutterpipe run` on `config` (which must put its socket at `socket`).
    /// `umask` runs it under that umask (through `sh`): the test process's own umask is
    /// every concurrent test's, so it is never changed.
    static func start(_ config: String, socket: String, in folder: TemporaryDirectory,
                      environment: [String: String] = [:], umask mask: String? = nil) async throws -> SocketSession {
        let arguments = ["run", "--config", config, "--log-format", "json", "--no-status"]
        let process: RunningProcess
        if let mask {
            process = try await RunningProcess.start(program: "/bin/sh", ["-c", "umask \(mask) && exec \"$0\" \"$@\"", try shutterpipeBinary()] + arguments,
                                                     in: folder.path, environment: environment)
        } else {
            process = try await RunningProcess.start(arguments, in: folder.path, environment: environment)
        }
        let ready = await eventually {
            let probe = connectUnixSocket(socket)
            if probe >= 0 { close(probe) }
            return probe >= 0 || !process.isRunning
        }
        guard ready, process.isRunning else {
            let outcome = await process.wait(timeout: .seconds(60))
            throw TestSupportError("shutterpipe run did not start: \(outcome.stderr)")
        }
        return SocketSession(process: process, socket: socket)
    }

    /// SIGTERM, then the outcome (the session drains and exits 0).
    func stop() async -> Outcome {
        kill(pid, SIGTERM)
        return await process.wait(timeout: .seconds(30))
    }
}

/// A config with a socket trigger and a files sink (the caller supplies the backend block).
func socketConfig(backend: String, socket: String, output: String, filename: String = "shot-{seq:05}.{ext}",
                  extra: String = "", in folder: TemporaryDirectory, name: String = "studio.yaml") throws -> String {
    try writeConfig("""
    version: 1
    session: chaos
    backend:
    \(backend)
    triggers:
      - type: socket
        path: \(socket)
    sinks:
      - type: files
        directory: \(output)
        filename: "\(filename)"
    \(extra)
    """, in: folder, name: name)
}

/// Writes `count` JPEGs of about `megabytes` MB each into `folder` (a small synthetic image
/// padded with comment segments, like a camera JPEG with a large preview), for a
/// file-stub `directory:` that replays them: big files make kills land mid-write.
func writeLargeJPEGs(_ count: Int, megabytes: Int, into folder: String) throws {
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    for index in 1...count {
        let small = [UInt8](SyntheticJPEG.make(width: 64, height: 48, shot: index))
        var bytes = Array(small[0..<2])
        let segment = [UInt8](repeating: UInt8(truncatingIfNeeded: 0x41 + index), count: 65_533)
        for _ in 0..<(megabytes * 16) { bytes += [0xFF, 0xFE, 0xFF, 0xFF] + segment }  // COM, length 65535
        bytes += small[2...]
        try Data(bytes).writeTestFile("\(folder)/IMG_\(String(format: "%04d", index)).JPG")
    }
}
