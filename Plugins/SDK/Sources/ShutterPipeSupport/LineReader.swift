#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation

/// Reads newline-separated lines from a file descriptor: standard input, a socket, a pipe.
///
/// The reads block, so they belong on a thread of their own: ``lines(from:threadName:limit:)``
/// starts one, and ``forEachLine(in:limit:_:)`` is for a thread the caller already owns.
/// A line longer than `limit` bytes is delivered cut to `limit`, and the rest of it, up to
/// its newline, is skipped: a flood without newlines can never grow memory without bound.
public enum LineReader {
    /// Why reading stopped.
    public enum End: Sendable, Equatable {
        /// End of input: the writer closed its end.
        case endOfInput
        /// The body asked to stop.
        case stopped
        /// A read failed (a receive timeout gives `EAGAIN`).
        case failed(SystemError)
    }

    /// The default longest line, 64 KiB.
    public static let defaultLimit = 64 * 1024

    /// Calls `body` with every line (without its newline) until end of input, a failure,
    /// or `body` returning false. A last line without a newline is delivered too.
    @discardableResult
    public static func forEachLine(in descriptor: Int32, limit: Int = defaultLimit, _ body: (Data) -> Bool) -> End {
        var splitter = Splitter(limit: limit)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { return .failed(SystemError("read")) }
            if count == 0 {
                if let last = splitter.finish(), !body(last) { return .stopped }
                return .endOfInput
            }
            for line in splitter.append(buffer[0..<count]) where !body(line) { return .stopped }
        }
    }

    /// The lines of `descriptor` as a stream, read on a thread of its own named
    /// `threadName` (for `top -H` and debuggers). The stream ends at end of input.
    ///
    /// - Parameter closingAtEnd: the reading thread closes the descriptor when input
    ///   ends. (Closing it from elsewhere while the thread may be blocked in `read` would
    ///   let the number be reused under the reader.)
    public static func lines(from descriptor: Int32, threadName: String, limit: Int = defaultLimit,
                             closingAtEnd: Bool = false) -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .unbounded)
        OwnedThread.start(threadName) {
            forEachLine(in: descriptor, limit: limit) { line in
                continuation.yield(String(decoding: line, as: UTF8.self))
                return true
            }
            if closingAtEnd { close(descriptor) }
            continuation.finish()
        }
        return stream
    }

    /// Cuts a byte stream into lines.
    public struct Splitter: Sendable {
        private let limit: Int
        private var pending = Data()
        private var skippingRestOfLine = false

        /// A splitter whose lines are at most `limit` bytes.
        public init(limit: Int = LineReader.defaultLimit) {
            self.limit = max(1, limit)
        }

        /// Takes more bytes; returns the lines they complete.
        public mutating func append(_ bytes: some Collection<UInt8>) -> [Data] {
            var lines: [Data] = []
            var rest = bytes[...]
            while !rest.isEmpty {
                let newline = rest.firstIndex(of: UInt8(ascii: "\n"))
                let piece = rest[..<(newline ?? rest.endIndex)]
                if !skippingRestOfLine {
                    let room = limit - pending.count
                    pending.append(contentsOf: piece.prefix(room))
                    if piece.count >= room {
                        // Over-long: deliver what fits once, skip the rest up to the newline.
                        lines.append(pending)
                        pending.removeAll(keepingCapacity: true)
                        skippingRestOfLine = true
                    }
                }
                guard let newline else { break }
                if !skippingRestOfLine { lines.append(pending) }
                pending.removeAll(keepingCapacity: true)
                skippingRestOfLine = false
                rest = rest[rest.index(after: newline)...]
            }
            return lines
        }

        /// At end of input: the last line, if it had no newline.
        public mutating func finish() -> Data? {
            defer { pending.removeAll() }
            return pending.isEmpty || skippingRestOfLine ? nil : pending
        }
    }
}
