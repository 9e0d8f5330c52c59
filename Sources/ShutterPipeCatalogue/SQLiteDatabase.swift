import CSQLite
import Foundation

/// A failure of SQLite, with its result code and message.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// SQLite's primary result code (`SQLITE_CORRUPT`, `SQLITE_BUSY`, …).
    public var code: Int32
    /// SQLite's message, with what we were doing.
    public var message: String

    public var description: String { message }

    /// Whether the file is damaged or not a database: it is moved aside and rebuilt.
    public var isCorrupt: Bool { code == SQLITE_CORRUPT || code == SQLITE_NOTADB }
}

/// One SQLite connection, used from one thread at a time (the caller serialises: the
/// catalogue's writer thread, or a command). A thin layer over the C API: statements
/// with bound values, rows as arrays of ``SQLiteValue``.
final class SQLiteDatabase {
    private var handle: OpaquePointer?
    /// The file, for messages.
    let path: String

    /// Opens (and creates, with `create`) the database at `path`, in WAL mode, waiting up
    /// to five seconds for another process's lock.
    init(path: String, create: Bool, readOnly: Bool = false) throws(SQLiteError) {
        self.path = path
        // Never through a link: a catalogue path linked elsewhere would get our tables.
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW
        flags |= readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if create && !readOnly { flags |= SQLITE_OPEN_CREATE }
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            handle = nil
            throw SQLiteError(code: code & 0xff, message: "cannot open the catalogue '\(path)': \(message)")
        }
        sqlite3_busy_timeout(handle, 5000)
        sqlite3_extended_result_codes(handle, 0)
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// Runs statements that return no rows (several, separated by `;`).
    func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_free(message)
            throw SQLiteError(code: code & 0xff, message: "catalogue '\(path)': \(text)")
        }
    }

    /// Runs one statement with `values` bound to its `?` in order; returns every row.
    @discardableResult
    func query(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> [[SQLiteValue]] {
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v2(handle, sql, -1, &statement, nil), "preparing")
        defer { sqlite3_finalize(statement) }
        for (index, value) in values.enumerated() {
            let position = Int32(index + 1)
            let code: Int32
            switch value {
            case .null: code = sqlite3_bind_null(statement, position)
            case .integer(let number): code = sqlite3_bind_int64(statement, position, number)
            case .real(let number): code = sqlite3_bind_double(statement, position, number)
            case .text(let text): code = sqlite3_bind_text(statement, position, text, -1, Self.transient)
            }
            try check(code, "binding")
        }
        var rows: [[SQLiteValue]] = []
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { try check(code, "running"); break }
            let count = sqlite3_column_count(statement)
            rows.append((0..<count).map { column in
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, column))
                case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, column))
                case SQLITE_NULL: return .null
                default: return .text(sqlite3_column_text(statement, column).map { String(cString: $0) } ?? "")
                }
            })
        }
        return rows
    }

    /// The rowid of the last insert.
    var lastInsertedID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Runs `body` in one transaction (`BEGIN IMMEDIATE`: the write lock is taken first, so
    /// two writers wait for each other instead of failing midway); rolls back if it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    private func check(_ code: Int32, _ doing: String) throws(SQLiteError) {
        guard code != SQLITE_OK && code != SQLITE_DONE && code != SQLITE_ROW else { return }
        throw SQLiteError(code: code & 0xff, message: "catalogue '\(path)': \(String(cString: sqlite3_errmsg(handle))) (\(doing))")
    }

    /// SQLite copies bound text at once.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

/// A value in a row or bound to a statement.
enum SQLiteValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)

    init(_ text: String?) { self = text.map { .text($0) } ?? .null }
    init(_ number: Int?) { self = number.map { .integer(Int64($0)) } ?? .null }
    init(_ number: Double?) { self = number.map { .real($0) } ?? .null }

    var text: String? {
        switch self {
        case .text(let text): return text
        case .integer(let number): return String(number)
        case .real(let number): return String(number)
        case .null: return nil
        }
    }

    var integer: Int? {
        switch self {
        case .integer(let number): return Int(number)
        case .real(let number): return Int(number)
        case .text(let text): return Int(text)
        case .null: return nil
        }
    }

    var real: Double? {
        switch self {
        case .real(let number): return number
        case .integer(let number): return Double(number)
        case .text(let text): return Double(text)
        case .null: return nil
        }
    }
}
