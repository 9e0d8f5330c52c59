#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeSupport

/// One client of the socket trigger: its descriptor, and the replies on their way to it.
///
/// Two rules make a reply reach only the client it is for, and never stall the session:
/// - **The descriptor lives as long as the connection object.** It is closed in `deinit`,
///   when the reader, the writer and every `sync` in flight have let go. Before, `sync`
///   took the number under the lock and wrote after releasing it; the reader could close
///   it meanwhile and `accept()` or a sink's `open()` reuse the number, so a reply went
///   to another client or into a photo.
/// - **Replies are queued, and written by the connection's own thread.** `send` never
///   blocks. A client that does not read its replies fills the socket's buffer, then this
///   queue; past ``limit`` replies it is disconnected. Before, each unread reply pinned a
///   thread of the cooperative pool in a blocking write.
final class SocketConnection: @unchecked Sendable {  // the queue is guarded by `condition`
    /// The replies a client may leave unread, beyond what the kernel buffers.
    static let limit = 256

    let descriptor: Int32
    private let condition = NSCondition()
    private var queue: [Data] = []
    private var ended = false
    private var writing = false
    private var writerEnded = false

    /// Takes `descriptor` (closed with this object) and starts the writer thread.
    init(descriptor: Int32) {
        self.descriptor = descriptor
        OwnedThread.start("shutterpipe socket reply") { [self] in write() }
    }

    deinit { close(descriptor) }

    /// Queues `line` for the client. Returns false, queueing nothing, when the client has
    /// ``limit`` replies unread: the caller disconnects it.
    func send(_ line: Data) -> Bool {
        condition.withLock {
            guard !ended else { return true }  // gone: the reply has nowhere to go
            guard queue.count < Self.limit else { return false }
            queue.append(line)
            condition.signal()
            return true
        }
    }

    /// Ends the connection both ways: the reader's `read` and the writer's `write` return.
    /// Queued replies are dropped.
    func hangUp() {
        condition.withLock {
            ended = true
            queue = []
            condition.signal()
        }
        shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Whether replies are still queued or being written.
    var isWriting: Bool { condition.withLock { !queue.isEmpty || writing } }

    /// Whether the writer thread has returned (and let go of the connection).
    var hasWriterEnded: Bool { condition.withLock { writerEnded } }

    /// The client closed its end: what is queued is still written, then the writer ends.
    func finishWriting() {
        condition.withLock {
            ended = true
            condition.signal()
        }
    }

    private func write() {
        defer { condition.withLock { writerEnded = true } }
        while true {
            condition.lock()
            while queue.isEmpty && !ended { condition.wait() }
            if queue.isEmpty {
                condition.unlock()
                return
            }
            let line = queue.removeFirst()
            writing = true
            condition.unlock()
            let written = (try? DescriptorIO.writeAll(line, to: descriptor)) != nil
            condition.withLock { writing = false }
            if !written {
                hangUp()  // the client went away
                return
            }
        }
    }
}
