#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// How log records are written to stderr.
public enum LogFormat: String, Sendable, CaseIterable {
    /// One line for people per record: time, source, message.
    case human
    /// One JSON object per line.
    case json
}

/// Writes log records and the live status line to standard error, from any thread.
///
/// On a terminal (and in the human format) the last line of the terminal is a status
/// line: every log line clears it, prints, and draws it again. Off a terminal there is no
/// status line, so the output stays clean for scripts.
public final class LogOutput: Sendable {
    private struct State {
        var statusText: String?
    }
    private let format: LogFormat
    private let minimumLevel: LogLevel
    /// Whether there is a status line (a terminal, human format, not turned off).
    public let showsStatus: Bool
    private let state = Mutex(State())
    private let descriptor: Int32

    /// Creates an output on `descriptor` (stderr by default).
    public init(format: LogFormat, minimumLevel: LogLevel = .info, statusLine: Bool, descriptor: Int32 = STDERR_FILENO) {
        self.format = format
        self.minimumLevel = minimumLevel
        self.showsStatus = statusLine && format == .human
        self.descriptor = descriptor
    }

    /// A logger whose records go here.
    public func logger(source: String) -> Logger {
        Logger(source: source) { [self] record in self.write(record) }
    }

    /// Replaces the status line (terminal only).
    public func setStatus(_ text: String) {
        guard showsStatus else { return }
        state.withLock { state in
            state.statusText = text
            emit("\r\u{1B}[2K" + text)
        }
    }

    /// Clears the status line for good (at exit).
    public func clearStatus() {
        guard showsStatus else { return }
        state.withLock { state in
            if state.statusText != nil { emit("\r\u{1B}[2K") }
            state.statusText = nil
        }
    }

    /// Writes one record.
    public func write(_ record: LogRecord) {
        guard record.level >= minimumLevel else { return }
        let line = format == .json ? Self.json(record) : Self.human(record)
        state.withLock { state in
            if let status = state.statusText {
                emit("\r\u{1B}[2K" + line + "\n" + status)
            } else {
                emit(line + "\n")
            }
        }
    }

    /// A console for plugins: lines go to standard output, with the status line cleared
    /// first and drawn again after, so the two never mix on a terminal.
    ///
    /// Without a status line (standard output not a terminal) the line is written outside
    /// the log's lock: a pipe nobody reads then blocks only the writer of that line, never
    /// the log, and so never the session.
    public var console: Console {
        Console { [self] line in
            let bytes = Array((line + "\n").utf8)
            let written = state.withLock { state -> Bool in
                guard state.statusText != nil else { return false }
                emit("\r\u{1B}[2K")
                try? DescriptorIO.writeAll(bytes, to: STDOUT_FILENO)
                if let status = state.statusText { emit(status) }
                return true
            }
            if !written { try? DescriptorIO.writeAll(bytes, to: STDOUT_FILENO) }
        }
    }

    private func emit(_ text: String) {
        try? DescriptorIO.writeAll(Array(text.utf8), to: descriptor)
    }

    static func human(_ record: LogRecord) -> String {
        let level: String
        switch record.level {
        case .debug: level = "debug: "
        case .info: level = ""
        case .warning: level = "warning: "
        case .error: level = "error: "
        @unknown default: level = "\(record.level.rawValue): "
        }
        // One record, one line: what came from outside cannot forge another or drive the terminal.
        return "\(Self.clock(record.time)) [\(LogText.escaped(record.source))] \(level)\(LogText.escaped(record.message))"
    }

    static func json(_ record: LogRecord) -> String {
        var pairs: [(String, String)] = [
            ("time", Self.iso8601(record.time)), ("level", record.level.rawValue),
            ("source", record.source), ("message", record.message),
        ]
        pairs += record.fields.filter { key, _ in !["time", "level", "source", "message"].contains(key) }
        return "{" + pairs.map { "\(jsonString($0)):\(jsonString($1))" }.joined(separator: ",") + "}"
    }

    /// A JSON string literal. (The record is assembled from these by hand only to keep its
    /// keys in order: time, level, source, message, fields.)
    static func jsonString(_ text: String) -> String {
        var out = ""
        JSONText.string(text, to: &out)
        return out
    }

    // The times are formatted by hand: a `DateFormatter` or `ISO8601DateFormatter` made
    // for every line cost about 0.2 ms of CPU a line (ICU), several milliseconds of a
    // burst's, on the cores the photos are stored with.

    /// `HH:mm:ss.SSS`, local time.
    static func clock(_ date: Date) -> String {
        let (parts, millis) = broken(date, local: true)
        return "\(digits(parts.tm_hour, 2)):\(digits(parts.tm_min, 2)):\(digits(parts.tm_sec, 2)).\(digits(millis, 3))"
    }

    /// RFC 3339 in UTC with milliseconds: `2026-12-06T17:13:50.671Z`.
    static func iso8601(_ date: Date) -> String {
        let (parts, millis) = broken(date, local: false)
        return "\(digits(parts.tm_year + 1900, 4))-\(digits(parts.tm_mon + 1, 2))-\(digits(parts.tm_mday, 2))T"
            + "\(digits(parts.tm_hour, 2)):\(digits(parts.tm_min, 2)):\(digits(parts.tm_sec, 2)).\(digits(millis, 3))Z"
    }

    /// `date` to the nearest millisecond (as Foundation's formatters round): the calendar
    /// fields of its second, and its milliseconds.
    private static func broken(_ date: Date, local: Bool) -> (tm, Int32) {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var seconds = time_t(milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000)
        var parts = tm()
        _ = local ? localtime_r(&seconds, &parts) : gmtime_r(&seconds, &parts)
        return (parts, Int32(milliseconds - Int64(seconds) * 1000))
    }

    /// `value` in decimal, zero-padded to `width` digits.
    private static func digits(_ value: Int32, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
