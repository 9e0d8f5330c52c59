#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Where plugins print lines meant for the user's standard output (a trigger's answer
/// lines, say). The host routes them so they never collide with its live status line on
/// a terminal; write through this rather than to file descriptor 1.
public struct Console: Sendable {
    private let printer: @Sendable (String) -> Void

    /// A console that hands every line to `printer`.
    public init(_ printer: @escaping @Sendable (String) -> Void) {
        self.printer = printer
    }

    /// Prints one line (a newline is added).
    public func printLine(_ line: String) {
        printer(line)
    }

    /// Writes straight to standard output, unbuffered.
    public static let standardOutput = Console { line in
        writeAll(Array((line + "\n").utf8), to: STDOUT_FILENO)
    }
}

/// Writes every byte to `descriptor`, retrying on EINTR; gives up silently when the
/// reader has gone (EPIPE), as a logger should.
public func writeAll(_ bytes: [UInt8], to descriptor: Int32) {
    var offset = 0
    bytes.withUnsafeBytes { raw in
        while offset < raw.count {
            let written = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }
}
