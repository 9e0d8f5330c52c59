#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeSupport
import Testing

/// Connects a stream socket to the Unix socket at `path`; the descriptor, or -1.
public func connectUnixSocket(_ path: String) -> Int32 {
    (try? UnixSocket.connect(to: path)) ?? -1
}

/// A test client for a Unix socket speaking lines, reading on a thread of its own.
public final class SocketLines: @unchecked Sendable {
    private let descriptor: Int32
    private let received = LockedLines()
    private let writer = BlockingQueue(label: "shutterpipe test socket writer")

    /// Connects to `path`, retrying until `timeout` while the server starts.
    public init(path: String, timeout: Duration = .seconds(60)) async throws {
        ignoreSIGPIPE()
        let deadline = ContinuousClock.now + timeout
        var connected: Int32 = -1
        while connected < 0 {
            let candidate = connectUnixSocket(path)
            if candidate >= 0 { connected = candidate; break }
            guard ContinuousClock.now < deadline else { throw TestSupportError("cannot connect to \(path)") }
            try await Task.sleep(for: .milliseconds(20))
        }
        descriptor = connected
        let lines = received
        let fd = connected
        Thread {
            LineReader.forEachLine(in: fd, limit: 16 * 1024 * 1024) { line in
                lines.append(String(decoding: line, as: UTF8.self))
                return true
            }
            lines.end()
        }.start()
    }

    /// Waits until the server closed the connection and every line it sent was read.
    /// Past `timeout` the test fails.
    @discardableResult
    public func waitUntilClosed(timeout: Duration = .seconds(60), sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        if await eventually(timeout: timeout, { self.received.hasEnded }) { return true }
        Issue.record("the server did not close the connection within \(timeout)", sourceLocation: sourceLocation)
        return false
    }

    deinit {
        shutdown(descriptor, Int32(SHUT_RDWR))  // wakes the reader thread, so the connection really ends
        Glibc.close(descriptor)
    }

    /// Sends raw text.
    @discardableResult
    public func send(_ text: String) async -> Bool { await send(bytes: Array(text.utf8)) }

    /// Sends raw bytes (garbage included), on a thread of the client's own: a server
    /// that reads slowly blocks that thread, never the cooperative pool the other tests
    /// run on. Returns false when the peer has closed the connection (EPIPE is an error,
    /// never a signal).
    @discardableResult
    public func send(bytes: [UInt8]) async -> Bool {
        let descriptor = self.descriptor
        return await writer.run { (try? DescriptorIO.writeAll(bytes, to: descriptor)) != nil }
    }

    /// The lines received so far.
    public var lines: [String] { received.all }

    /// Waits until `count` lines arrived (or `timeout`), and returns them parsed as JSON objects.
    public func replies(_ count: Int, timeout: Duration = .seconds(60)) async -> [[String: Any]] {
        _ = await eventually(timeout: timeout) { self.received.count >= count }
        return received.all.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    /// Closes the connection.
    public func close() { shutdown(descriptor, Int32(SHUT_RDWR)) }
}

private final class LockedLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    private var ended = false
    func append(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
    func end() { lock.lock(); ended = true; lock.unlock() }
    var hasEnded: Bool { lock.lock(); defer { lock.unlock() }; return ended }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return lines }
    var count: Int { lock.lock(); defer { lock.unlock() }; return lines.count }
}
