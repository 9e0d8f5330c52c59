#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeSupport
import Synchronization

/// Frees the libgphoto2 thread from a call that will never return.
///
/// libgphoto2 cannot be cancelled. Its generic PTP capture waits for the camera's
/// CaptureComplete and ObjectAdded events in a loop with no time limit (camlibs/ptp2
/// `camera_capture`), so a camera that loses one event, or sends a packet whose length
/// lies, holds the call, and every later call queued behind it, for good. Over PTP/IP the
/// call can be broken: shutting down this process's TCP connections to the camera makes
/// libgphoto2's reads fail, the call returns an I/O error, and the backend reconnects.
/// (Over USB libgphoto2's own transfer timeouts apply; there is nothing to shut down.)
enum StuckCallBreaker {
    /// Shuts down every TCP connection of this process to the PTP/IP camera at `port`
    /// (`ptpip:HOST[:PORT[:EVENTPORT]]`). Returns how many; 0 for other ports.
    @discardableResult
    static func breakConnections(to port: String) -> Int {
        guard let (host, ports) = Self.endpoints(port) else { return 0 }
        let inodes = Self.socketInodes(connectedTo: host, ports: ports)
        guard !inodes.isEmpty else { return 0 }
        var count = 0
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            guard let descriptor = Int32(name),
                  let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"),
                  target.hasPrefix("socket:["), let inode = UInt64(target.dropFirst(8).dropLast()),
                  inodes.contains(inode) else { continue }
            if shutdown(descriptor, Int32(SHUT_RDWR)) == 0 { count += 1 }
        }
        return count
    }

    /// The IPv4 address and ports of a `ptpip:` port (15740 when none is given).
    static func endpoints(_ port: String) -> (UInt32, Set<UInt16>)? {
        guard port.hasPrefix("ptpip:") else { return nil }
        let parts = port.dropFirst(6).split(separator: ":").map(String.init)
        guard let hostText = parts.first else { return nil }
        var address = in_addr()
        guard inet_pton(AF_INET, hostText, &address) == 1 else { return nil }
        let ports = Set(parts.dropFirst().compactMap { UInt16($0) })
        return (address.s_addr, ports.isEmpty ? [15740] : ports)
    }

    /// The inodes of this process's TCP sockets whose remote end is `host` at one of `ports`
    /// (from /proc/self/net/tcp: addresses in hex, the IPv4 address in memory order).
    static func socketInodes(connectedTo host: UInt32, ports: Set<UInt16>) -> Set<UInt64> {
        guard let table = readWhole("/proc/self/net/tcp") else { return [] }
        var inodes: Set<UInt64> = []
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 9 else { continue }
            let remote = fields[2].split(separator: ":")
            guard remote.count == 2, let address = UInt32(remote[0], radix: 16), let remotePort = UInt16(remote[1], radix: 16),
                  address == host, ports.contains(remotePort), let inode = UInt64(fields[9]), inode != 0 else { continue }
            inodes.insert(inode)
        }
        return inodes
    }

    /// A /proc file read to its end. (They report size 0, and a busy host's TCP table runs
    /// to many pages: a single read would miss the camera's connections.)
    static func readWhole(_ path: String) -> String? {
        (try? DescriptorIO.readFile(path)).map { String(decoding: $0, as: UTF8.self) }
    }
}

/// Whether a call handed to the libgphoto2 thread has started and not yet returned (a
/// call skipped because its caller gave up while it waited never starts).
final class CallInFlight: Sendable {
    private let phase = Mutex((started: false, finished: false))
    func start() { phase.withLock { $0.started = true } }
    func finish() { phase.withLock { $0.finished = true } }
    var isRunning: Bool { phase.withLock { $0.started && !$0.finished } }
}
