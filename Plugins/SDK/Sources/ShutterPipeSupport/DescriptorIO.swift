#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit

/// Reads and writes on raw file descriptors, for code on threads of its own.
public enum DescriptorIO {
    /// Writes every byte to `descriptor`, retrying on EINTR and short writes.
    ///
    /// A reader that has gone is an error (`EPIPE`), never a signal that ends the process:
    /// SIGPIPE is blocked on this thread for the write, and one the write raised is taken
    /// off the thread before it is unblocked, whatever the process's SIGPIPE disposition.
    /// So plugins, hosts and test helpers may write to a child or a client that died.
    public static func writeAll<Bytes: Collection>(_ bytes: Bytes, to descriptor: Int32) throws(SystemError) where Bytes.Element == UInt8 {
        let outcome: Int32? = bytes.withContiguousStorageIfAvailable { buffer in
            writeAll(UnsafeRawBufferPointer(buffer), to: descriptor)
        }
        let code = outcome ?? Array(bytes).withUnsafeBytes { writeAll($0, to: descriptor) }
        if code != 0 { throw SystemError("write", code: code) }
    }

    /// Reads until end of input. Retries on EINTR.
    public static func readAll(from descriptor: Int32) throws(SystemError) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw SystemError("read") }
            if count == 0 { return data }
            data.append(contentsOf: buffer[0..<count])
        }
    }

    /// Reads a whole file (such as one under /proc, whose size is unknown beforehand).
    public static func readFile(_ path: String) throws(SystemError) -> Data {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemError("open '\(path)'") }
        defer { close(descriptor) }
        return try readAll(from: descriptor)
    }

    /// The most one `write` is given. Measured on this project's machines (a Firecracker
    /// guest, ext4): one 12 MB `write` from a buffer just filled took 20 ms, the same bytes in
    /// 1 MiB pieces 2 ms, and the file's fsync after it 5.5 ms against 3.3 ms. A photo in
    /// memory is such a buffer; smaller pieces cost one system call per MiB.
    public static let largestWrite = 1 << 20

    /// Returns 0 or the errno of the failure.
    private static func writeAll(_ raw: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32 {
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        var pending = sigset_t()
        sigpending(&pending)
        let alreadyPending = sigismember(&pending, SIGPIPE) == 1
        var previousMask = sigset_t()
        pthread_sigmask(SIG_BLOCK, &pipeSignal, &previousMask)
        var failure: Int32 = 0
        var offset = 0
        while offset < raw.count {
            let written = write(descriptor, raw.baseAddress! + offset, min(raw.count - offset, largestWrite))
            if written < 0 && errno == EINTR { continue }
            if written < 0 { failure = errno; break }
            if written == 0 { failure = EIO; break }
            offset += written
        }
        if failure == EPIPE && !alreadyPending {
            var now = timespec()
            _ = sigtimedwait(&pipeSignal, nil, &now)
        }
        pthread_sigmask(SIG_SETMASK, &previousMask, nil)
        return failure
    }
}

extension Console {
    /// Writes straight to standard output, unbuffered. A closed output is ignored.
    public static let standardOutput = Console { line in
        try? DescriptorIO.writeAll(Array((line + "\n").utf8), to: STDOUT_FILENO)
    }

    /// Writes straight to standard error, unbuffered. A closed output is ignored.
    public static let standardError = Console { line in
        try? DescriptorIO.writeAll(Array((line + "\n").utf8), to: STDERR_FILENO)
    }
}
