#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeSupport
import Synchronization

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
final class SocketConnection: Sendable {
    /// The replies a client may leave unread, beyond what the kernel buffers.
    static let limit = 256

    let descriptor: Int32
    private let replies = ValueChannel<Data>(capacity: SocketConnection.limit)
    private let writerEnded = Atomic(false)

    /// Takes `descriptor` (closed with this object) and starts the writer thread.
    init(descriptor: Int32) {
        self.descriptor = descriptor
        OwnedThread.start("shutterpipe socket reply") { [self] in write() }
    }

    deinit { close(descriptor) }

    /// Queues `line` for the client. Returns false, queueing nothing, when the client has
    /// ``limit`` replies unread: the caller disconnects it.
    func send(_ line: Data) -> Bool {
        replies.send(line) != .full  // closed: gone, the reply has nowhere to go
    }

    /// Ends the connection both ways: the reader's `read` and the writer's `write` return.
    /// Queued replies are dropped.
    func hangUp() {
        replies.cancel()
        shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Whether replies are still queued or being written.
    var isWriting: Bool { !replies.isIdle }

    /// Whether the writer thread has returned (and let go of the connection).
    var hasWriterEnded: Bool { writerEnded.load(ordering: .acquiring) }

    /// The client closed its end: what is queued is still written, then the writer ends.
    func finishWriting() {
        replies.finish()
    }

    private func write() {
        defer { writerEnded.store(true, ordering: .releasing) }
        while case .value(let line) = replies.receive() {
            guard (try? DescriptorIO.writeAll(line, to: descriptor)) != nil else {
                hangUp()  // the client went away
                return
            }
        }
    }
}
