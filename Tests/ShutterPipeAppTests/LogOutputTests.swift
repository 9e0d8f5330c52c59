import Foundation
@testable import ShutterPipeApp
import ShutterPipeKit
import Testing

@Suite("log output: times and JSON written by hand")
struct LogOutputTests {
    /// Whole seconds, the last millisecond of one, a date before 2000 and one far ahead.
    static let dates: [Date] = [
        Date(timeIntervalSince1970: 1_796_578_430.671), Date(timeIntervalSince1970: 1_796_578_430.9999),
        Date(timeIntervalSince1970: 1_796_578_430), Date(timeIntervalSince1970: 946_684_799.5), Date(timeIntervalSince1970: 4_102_444_800.001),
    ]

    @Test("a line's time is what Foundation's formatters write: RFC 3339 in UTC with milliseconds for JSON, the local HH:mm:ss.SSS for people")
    func times() {
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let clock = DateFormatter()
        clock.locale = Locale(identifier: "en_US_POSIX")
        clock.dateFormat = "HH:mm:ss.SSS"
        for date in Self.dates {
            #expect(LogOutput.iso8601(date) == iso.string(from: date), "\(date.timeIntervalSince1970)")
            #expect(LogOutput.clock(date) == clock.string(from: date), "\(date.timeIntervalSince1970)")
        }
    }

    @Test("a JSON line gives back every message exactly: quotes, backslashes, line breaks, control characters, slashes, emoji and line separators")
    func jsonLine() throws {
        let message = "a \"quoted\" C:\\path/to\nnext\r\t\u{1B}[31m \u{2028}\u{2029} 📷 é"
        let line = LogOutput.json(LogRecord(time: Self.dates[0], level: .warning, source: "files", message: message, fields: [("path", "/photos/IMG_1.JPG")]))
        #expect(!line.contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        #expect(object == ["time": "2026-12-06T17:33:50.671Z", "level": "warning", "source": "files", "message": message, "path": "/photos/IMG_1.JPG"])
        #expect(line.hasPrefix("{\"time\":"))
    }
}
