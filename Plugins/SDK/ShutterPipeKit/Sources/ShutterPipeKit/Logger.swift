import Foundation

/// How much a log record matters. It may grow (contract 10 on): switch over it with
/// `@unknown default`, and compare levels with `<` rather than listing them.
public enum LogLevel: String, Sendable, Comparable, CaseIterable {
    /// Detail for developers; shown with `--verbose`.
    case debug
    /// What happened: one line per event.
    case info
    /// Something the user should know that did not stop the work.
    case warning
    /// Something failed.
    case error

    /// Orders levels from `debug` to `error`.
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// One log record.
public struct LogRecord: Sendable {
    /// When it was logged.
    public var time: Date
    /// How much it matters.
    public var level: LogLevel
    /// Who logged it: "coordinator", or a plugin instance such as "sink files".
    public var source: String
    /// The human message.
    public var message: String
    /// Structured fields for machine-readable output, in order.
    public var fields: [(String, String)]

    /// Creates a record.
    public init(time: Date = Date(), level: LogLevel, source: String, message: String, fields: [(String, String)] = []) {
        self.time = time
        self.level = level
        self.source = source
        self.message = message
        self.fields = fields
    }
}

/// A logger for the core and plugins. The host decides where records go (human lines or
/// JSON lines on stderr).
public struct Logger: Sendable {
    /// Who logs through this logger.
    public let source: String
    private let handler: @Sendable (LogRecord) -> Void

    /// Creates a logger that hands every record to `handler`.
    public init(source: String, handler: @escaping @Sendable (LogRecord) -> Void) {
        self.source = source
        self.handler = handler
    }

    /// A logger that drops everything.
    public static let discarding = Logger(source: "") { _ in }

    /// The same destination under another source name.
    public func named(_ source: String) -> Logger {
        Logger(source: source, handler: handler)
    }

    /// Logs a record.
    public func log(_ level: LogLevel, _ message: String, _ fields: [(String, String)] = []) {
        handler(LogRecord(level: level, source: source, message: message, fields: fields))
    }

    /// Logs at ``LogLevel/debug``.
    public func debug(_ message: String, _ fields: [(String, String)] = []) { log(.debug, message, fields) }
    /// Logs at ``LogLevel/info``.
    public func info(_ message: String, _ fields: [(String, String)] = []) { log(.info, message, fields) }
    /// Logs at ``LogLevel/warning``.
    public func warning(_ message: String, _ fields: [(String, String)] = []) { log(.warning, message, fields) }
    /// Logs at ``LogLevel/error``.
    public func error(_ message: String, _ fields: [(String, String)] = []) { log(.error, message, fields) }
}
