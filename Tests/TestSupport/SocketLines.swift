#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Connects a stream socket to the Unix socket at `path`; the descriptor, or -1.
public func connectUnixSocket(_ path: String) -> Int32 {
    let candidate = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        let bytes = Array(path.utf8.prefix(raw.count - 1))
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(candidate, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    if result == 0 { return candidate }
    Glibc.close(candidate)
    return -1
}

/// A test client for a Unix socket speaking lines, reading on a thread of its own.
public final class SocketLines: @unchecked Sendable {
    private let descriptor: Int32
    private let received = LockedLines()

    /// Connects to `path`, retrying until `timeout` while the server starts.
    public init(path: String, timeout: Duration = .seconds(10)) async throws {
        ignoreSIGPIPE()
        let deadline = ContinuousClock.now + timeout
        var connected: Int32 = -1
        while connected < 0 {
            let candidate = connectUnixSocket(path)
            if candidate >= 0 { connected = candidate; break }
            guard ContinuousClock.now < deadline else { throw FakeCameraError("cannot connect to \(path)") }
            try await Task.sleep(for: .milliseconds(20))
        }
        descriptor = connected
        let lines = received
        let fd = connected
        Thread {
            var pending = Data()
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                pending.append(contentsOf: buffer[0..<count])
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    lines.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
        }.start()
    }

    deinit {
        shutdown(descriptor, Int32(SHUT_RDWR))  // wakes the reader thread, so the connection really ends
        Glibc.close(descriptor)
    }

    /// Sends raw text.
    @discardableResult
    public func send(_ text: String) -> Bool { send(bytes: Array(text.utf8)) }

    /// Sends raw bytes (garbage included). Returns false when the peer has closed the
    /// connection (MSG_NOSIGNAL: no SIGPIPE for the test process).
    @discardableResult
    public func send(bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    /// The lines received so far.
    public var lines: [String] { received.all }

    /// Waits until `count` lines arrived (or `timeout`), and returns them parsed as JSON objects.
    public func replies(_ count: Int, timeout: Duration = .seconds(30)) async -> [[String: Any]] {
        _ = await eventually(timeout: timeout) { self.received.count >= count }
        return received.all.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    /// Closes the connection.
    public func close() { shutdown(descriptor, Int32(SHUT_RDWR)) }
}

private final class LockedLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return lines }
    var count: Int { lock.lock(); defer { lock.unlock() }; return lines.count }
}
