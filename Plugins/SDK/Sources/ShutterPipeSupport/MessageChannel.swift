#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CShutterPipeSupport
import Foundation
import Synchronization

/// One end of a connection between two processes that keeps each message whole
/// (`SOCK_SEQPACKET`) and can carry open file descriptors with a message (`SCM_RIGHTS`):
/// how a host and a worker process of its own talk, and hand each other bytes without a
/// copy (a ``SharedBytes`` descriptor).
///
/// Sending is safe from several threads at once (a message is one system call);
/// receiving is for one thread, which blocks in ``receive()``.
public final class MessageChannel: Sendable {
    /// The largest message, in bytes. Bigger payloads travel as descriptors.
    public static let maximumMessage = 256 * 1024

    /// The socket.
    public let descriptor: Int32
    /// Where ``receive()`` reads into, made once: a fresh 256 KiB buffer per message was
    /// a page-faulting allocation and a memset on every fire order.
    private let buffer = Mutex<[UInt8]>([UInt8](repeating: 0, count: MessageChannel.maximumMessage))

    /// Wraps a connected `SOCK_SEQPACKET` socket; the channel closes it.
    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Two connected ends.
    public static func pair() throws(SystemError) -> (MessageChannel, MessageChannel) {
        var ends: [Int32] = [-1, -1]
        guard shutterpipe_seqpacket_pair(&ends) == 0 else { throw SystemError("socketpair") }
        return (MessageChannel(descriptor: ends[0]), MessageChannel(descriptor: ends[1]))
    }

    /// Sends one message with `descriptors` attached (they stay open here; the receiver
    /// gets copies). A peer that has gone is `EPIPE`, never a signal.
    public func send(_ message: Data, descriptors: [Int32] = []) throws(SystemError) {
        guard message.count <= Self.maximumMessage else { throw SystemError("send a message of \(message.count) bytes", code: EMSGSIZE) }
        let sent = message.withUnsafeBytes { raw in
            descriptors.withUnsafeBufferPointer { fds in
                shutterpipe_send_message(descriptor, raw.baseAddress, UInt(raw.count), fds.baseAddress, Int32(fds.count))
            }
        }
        guard sent == message.count else { throw SystemError("send", code: sent < 0 ? errno : EIO) }
    }

    /// The next message and the descriptors that came with it (the caller owns them), or
    /// `nil` when the peer closed its end.
    public func receive() throws(SystemError) -> (message: Data, descriptors: [Int32])? {
        var descriptors = [Int32](repeating: -1, count: 64)
        var received: Int32 = 0, truncated: Int32 = 0
        let (count, message): (Int, Data) = buffer.withLock { buffer in
            let count = buffer.withUnsafeMutableBytes { raw in
                descriptors.withUnsafeMutableBufferPointer { fds in
                    shutterpipe_receive_message(descriptor, raw.baseAddress, UInt(raw.count), fds.baseAddress, 64, &received, &truncated)
                }
            }
            return (count, count > 0 ? Data(buffer.prefix(count)) : Data())
        }
        let incoming = Array(descriptors.prefix(Int(received)))
        if count < 0 { throw SystemError("receive") }
        if count == 0 && incoming.isEmpty { return nil }
        if truncated != 0 {
            incoming.forEach { _ = close($0) }
            throw SystemError("receive: a message longer than \(Self.maximumMessage) bytes", code: EMSGSIZE)
        }
        return (message, incoming)
    }

    /// Shuts the connection down both ways: a thread blocked in ``receive()`` returns.
    public func shutDown() {
        shutdown(descriptor, Int32(SHUT_RDWR))
    }
}

/// Bytes in an anonymous in-memory file (`memfd`), to cross a process boundary without
/// a copy: the writer fills the file (or lets a C library write into its descriptor),
/// sends the descriptor, and the reader maps it.
public enum SharedBytes {
    /// A new, empty in-memory file named `name` (for /proc and debuggers); the caller
    /// owns the descriptor.
    public static func create(named name: String) throws(SystemError) -> Int32 {
        let descriptor = shutterpipe_memfd(name)
        guard descriptor >= 0 else { throw SystemError("memfd_create") }
        return descriptor
    }

    /// The whole file at `descriptor` as `Data`, mapped read-only, without a copy; the
    /// mapping goes when the `Data` does. The descriptor stays the caller's.
    ///
    /// The sender is another process (a camera worker that parses what a camera sends):
    /// its memfd's size is sealed first, so it cannot shrink the file under the mapping
    /// (reading past a file's end through a mapping raises SIGBUS, which would end the
    /// session). A descriptor that cannot be sealed, or is not a regular file, is read,
    /// not mapped.
    public static func map(_ descriptor: Int32) throws(SystemError) -> Data {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw SystemError("fstat") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw SystemError("a shared file that is not a regular one", code: EINVAL) }
        guard shutterpipe_seal_size(descriptor) == 0 else { return try copy(descriptor) }
        guard fstat(descriptor, &info) == 0 else { throw SystemError("fstat") }
        let size = Int(info.st_size)
        guard size > 0 else { return Data() }
        guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), address != MAP_FAILED else {
            throw SystemError("mmap")
        }
        return Data(bytesNoCopy: address, count: size, deallocator: .custom { pointer, length in munmap(pointer, length) })
    }

    /// The file at `descriptor` read from its start (the offset is shared with the
    /// sender's, so `pread`), until its end.
    private static func copy(_ descriptor: Int32) throws(SystemError) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(data.count)) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw SystemError("read a shared file") }
            if count == 0 { return data }
            data.append(contentsOf: buffer[0..<count])
        }
    }
}
