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
}
