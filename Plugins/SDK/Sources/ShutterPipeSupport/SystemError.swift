#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A system call that failed: what was being done, and `errno`.
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was being done, for people: "connect to '/run/shutterpipe.sock'".
    public var operation: String
    /// The `errno` value.
    public var code: Int32

    /// Creates an error; `code` defaults to the current `errno`.
    public init(_ operation: String, code: Int32 = errno) {
        self.operation = operation
        self.code = code
    }

    /// The system's words for ``code`` ("Broken pipe").
    public var reason: String { String(cString: strerror(code)) }

    /// `operation: reason`.
    public var description: String { "\(operation): \(reason)" }
}
