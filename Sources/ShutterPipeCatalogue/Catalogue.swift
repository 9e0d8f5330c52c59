#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// A catalogue could not be opened or used: the message names the file and the fix.
public struct CatalogueError: Error, Sendable, CustomStringConvertible {
    public var description: String
    /// The file is damaged (`repairing` open moves it aside).
    public var isCorrupt = false

    init(_ description: String, corrupt: Bool = false) {
        self.description = description
        self.isCorrupt = corrupt
    }

    init(_ error: SQLiteError) {
        self.description = error.description
        self.isCorrupt = error.isCorrupt
    }
}

/// The session catalogue: every shot, its files, EXIF summary, rating, label, pick and
/// keywords, in one SQLite file (WAL journal) that many sessions share. Ids are SQLite
/// row ids, never reused, so they survive restarts.
///
/// The photos on disk and their sidecars are the truth; the catalogue is an index of them
/// that ``reconcile(folders:naming:)`` brings back in line (after a crash, after files
/// were added or removed by hand) and that can always be made again from them.
///
/// One connection, used from one thread at a time: the catalogue sink's writer thread, or
/// a command. Several processes may use one file at once; SQLite's locks serialise them.
public final class Catalogue: @unchecked Sendable {
    /// The catalogue file.
    public let path: String
    let database: SQLiteDatabase

    private init(path: String, database: SQLiteDatabase) {
        self.path = path
        self.database = database
    }

    /// Opens the catalogue at `path`, migrating it forward, or creates it (and its folder)
    /// when `create`. Throws for a newer schema, with the fix, and for a damaged file
    /// (``CatalogueError/isCorrupt``).
    public static func open(at path: String, create: Bool = true) throws(CatalogueError) -> Catalogue {
        let folder = PathName.parent(path)
        var status = stat()
        if lstat(path, &status) == 0, status.st_mode & S_IFMT != S_IFREG {
            let kind = status.st_mode & S_IFMT
            let what = kind == S_IFLNK ? "a symbolic link" : kind == S_IFDIR ? "a folder" : "not a regular file"
            throw CatalogueError("cannot open the catalogue '\(path)': it is \(what), and is never followed or written through, so that nothing it points at gets the catalogue's tables; remove it (a new catalogue is made from the photos), or point catalogue.path (or --catalogue) at the file itself")
        }
        if !FileManager.default.fileExists(atPath: path) {
            guard create else {
                throw CatalogueError("no catalogue at '\(path)': run a session with this config first, give --catalogue PATH, or make one with 'shutterpipe shots rebuild DIR'")
            }
            try makeFolder(of: path)
        }
        if let problem = folderProblem(folder.isEmpty ? "." : folder) {
            throw CatalogueError("cannot open the catalogue '\(path)': its folder '\(folder)' \(problem), and whoever may change it could give the catalogue (and the previews kept beside it) files of their choosing; remove that folder (a new one is made, and the catalogue from the photos), or point catalogue.path (or --catalogue) at a folder of this user's own")
        }
        do {
            let database = try SQLiteDatabase(path: path, create: create)
            let catalogue = Catalogue(path: path, database: database)
            try catalogue.prepare()
            return catalogue
        } catch let error as CatalogueError {
            throw error
        } catch let error as SQLiteError {
            throw CatalogueError(error)
        } catch {
            throw CatalogueError("catalogue '\(path)': \(error)")
        }
    }

    /// ``open(at:create:)``, but a damaged file is moved aside (`NAME.corrupt-TIME`, with
    /// its journal) and a new one made; `movedAside` hears where it went. The caller then
    /// reconciles with the folders, which fills the new file from the photos.
    public static func openRepairing(at path: String, movedAside: (String) -> Void) throws(CatalogueError) -> Catalogue {
        do {
            return try open(at: path)
        } catch where error.isCorrupt {
            let stamp = ISO8601DateFormatter.string(from: Date(), timeZone: .current, formatOptions: [.withYear, .withMonth, .withDay, .withTime])
            let aside = "\(path).corrupt-\(stamp)"
            guard rename(path, aside) == 0 else {
                throw CatalogueError("the catalogue '\(path)' is damaged (\(error)) and cannot be moved aside: \(String(cString: strerror(errno))); move it away by hand")
            }
            for suffix in ["-wal", "-shm"] { _ = rename(path + suffix, aside + suffix) }
            movedAside(aside)
            return try open(at: path)
        }
    }

    /// WAL journal, foreign keys, the integrity check and the migrations.
    private func prepare() throws {
        try database.execute("PRAGMA foreign_keys = ON")
        let version = try database.query("PRAGMA user_version").first?.first?.integer ?? 0
        if version > CatalogueSchema.current {
            throw CatalogueError("the catalogue '\(path)' was written by a newer shutterpipe (schema \(version); this one reads up to \(CatalogueSchema.current)): upgrade shutterpipe, or point catalogue.path (or --catalogue) at another file")
        }
        _ = try database.query("PRAGMA journal_mode = WAL")
        try database.execute("PRAGMA synchronous = NORMAL")
        if version > 0 {
            let check = try database.query("PRAGMA quick_check").first?.first?.text ?? ""
            guard check == "ok" else { throw CatalogueError("the catalogue '\(path)' is damaged: \(check)", corrupt: true) }
        }
        for step in version..<CatalogueSchema.current {
            try database.transaction {
                // Another process may have migrated it while we waited for the lock.
                let now = try database.query("PRAGMA user_version").first?.first?.integer ?? 0
                guard now == step else { return }
                try database.execute(CatalogueSchema.migrations[step])
                try database.execute("PRAGMA user_version = \(step + 1)")
            }
        }
    }

    // MARK: Settings

    /// A value the catalogue keeps for the commands that use it offline (`sidecarName`).
    public func setting(_ key: String) throws(CatalogueError) -> String? {
        try run { try database.query("SELECT value FROM settings WHERE key = ?", [.text(key)]).first?.first?.text }
    }

    public func setSetting(_ key: String, _ value: String) throws(CatalogueError) {
        try run {
            _ = try database.query("INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [.text(key), .text(value)])
        }
    }

    /// How this catalogue's sidecars are named (the files sink's `sidecarName`).
    public func sidecarNaming() -> SidecarNaming {
        ((try? setting("sidecarName")) ?? nil).flatMap(SidecarNaming.init(rawValue:)) ?? .append
    }

    // MARK: Sessions and shots

    /// Records the start of a session run; returns its id.
    public func startSession(name: String, at date: Date = Date()) throws(CatalogueError) -> Int {
        try run {
            try database.query("INSERT INTO sessions(name, started, host) VALUES (?, ?, ?)",
                               [.text(name), .real(date.timeIntervalSince1970), SQLiteValue(ProcessInfo.processInfo.hostName)])
            return Int(database.lastInsertedID)
        }
    }

    public func endSession(_ id: Int, at date: Date = Date()) throws(CatalogueError) {
        try run { _ = try database.query("UPDATE sessions SET ended = ? WHERE id = ?", [.real(date.timeIntervalSince1970), .integer(Int64(id))]) }
    }

    /// Records a shot (in one transaction with its files); returns its id. A file path
    /// the catalogue had for another shot now belongs to this one: the file on disk is
    /// this shot's.
    @discardableResult
    public func record(_ shot: ShotRecord, session: Int?) throws(CatalogueError) -> Int {
        try run { try database.transaction { try insert(shot, session: session) } }
    }

    /// Records several shots in one transaction.
    public func record(_ shots: [ShotRecord], session: Int?) throws(CatalogueError) {
        try run { try database.transaction { for shot in shots { _ = try insert(shot, session: session) } } }
    }

    private func insert(_ shot: ShotRecord, session: Int?) throws -> Int {
        func time(_ date: Date?) -> SQLiteValue { SQLiteValue(date?.timeIntervalSince1970) }
        try database.query("""
            INSERT INTO shots(session_id, shot_key, run_number, trigger, camera, camera_model, camera_serial, camera_port, asked, fired, stored, state,
                              failure_cause, failure_message, exposure_time, aperture, iso, focal_length, lens, orientation, taken, rating, label, pick,
                              session_label, sequence_name, sequence_kind, sequence_run, sequence_index, sequence_count, sequence_setting,
                              sequence_value, sequence_ev)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [
                SQLiteValue(session), SQLiteValue(shot.shotID?.description), SQLiteValue(shot.runNumber), SQLiteValue(shot.trigger), SQLiteValue(shot.camera),
                SQLiteValue(shot.exif.model), SQLiteValue(shot.exif.serial), SQLiteValue(shot.cameraPort),
                time(shot.asked), time(shot.fired), time(shot.stored), .text(shot.state.rawValue),
                SQLiteValue(shot.failureCause), SQLiteValue(shot.failureMessage),
                SQLiteValue(shot.exif.exposureTime), SQLiteValue(shot.exif.aperture), SQLiteValue(shot.exif.iso),
                SQLiteValue(shot.exif.focalLength), SQLiteValue(shot.exif.lens), SQLiteValue(shot.exif.orientation),
                SQLiteValue(shot.exif.captureTime), .integer(Int64(max(0, min(5, shot.rating)))), SQLiteValue(shot.label),
                .integer(Int64(shot.pick.rawValue)), SQLiteValue(shot.sessionLabel),
                SQLiteValue(shot.sequence?.name), SQLiteValue(shot.sequence?.kind), SQLiteValue(shot.sequence?.run), SQLiteValue(shot.sequence?.index),
                SQLiteValue(shot.sequence?.count), SQLiteValue(shot.sequence?.setting), SQLiteValue(shot.sequence?.value), SQLiteValue(shot.sequence?.ev),
            ])
        let id = Int(database.lastInsertedID)
        for file in shot.files { try insert(file, shot: id) }
        // A frame per camera of its files, in their order; a shot without files has one,
        // so that it can be marked too. Each starts with the record's marks.
        var cameras: [String] = []
        for file in shot.files where !cameras.contains(file.camera ?? "") { cameras.append(file.camera ?? "") }
        for camera in cameras.isEmpty ? [""] : cameras {
            try database.query("INSERT OR IGNORE INTO frames(shot_id, camera, rating, label, pick) VALUES (?, ?, ?, ?, ?)",
                               [.integer(Int64(id)), .text(camera), .integer(Int64(max(0, min(5, shot.rating)))), SQLiteValue(shot.label),
                                .integer(Int64(shot.pick.rawValue))])
        }
        for keyword in Set(shot.keywords) {
            try database.query("INSERT OR IGNORE INTO keywords(shot_id, keyword) VALUES (?, ?)", [.integer(Int64(id)), .text(keyword)])
        }
        return id
    }

    private func insert(_ file: CatalogueFile, shot: Int) throws {
        let previous = try database.query("SELECT shot_id FROM files WHERE path = ?", [.text(file.path)]).first?.first?.integer
        try database.query("""
            INSERT INTO files(shot_id, path, size, kind, sha256, camera_file, missing, camera) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(path) DO UPDATE SET shot_id = excluded.shot_id, size = excluded.size, kind = excluded.kind,
                sha256 = excluded.sha256, camera_file = excluded.camera_file, missing = excluded.missing, camera = excluded.camera
            """, [.integer(Int64(shot)), .text(file.path), .integer(Int64(file.size)), .text(file.kind.rawValue), SQLiteValue(file.sha256),
                  SQLiteValue(file.cameraFile), .integer(file.missing ? 1 : 0), SQLiteValue(file.camera)])
        // A shot imported for this file (found on disk before its record came) has no
        // file left now: the record is that shot.
        if let previous, previous != shot {
            try database.query("DELETE FROM shots WHERE id = ? AND state = 'imported' AND NOT EXISTS (SELECT 1 FROM files WHERE shot_id = ?)",
                               [.integer(Int64(previous)), .integer(Int64(previous))])
        }
    }

    // MARK: The rescan's steps

    /// Every recorded file: path → (shot id, missing).
    func knownFiles() throws(CatalogueError) -> [String: (shot: Int, missing: Bool)] {
        try run {
            var known: [String: (shot: Int, missing: Bool)] = [:]
            for row in try database.query("SELECT path, shot_id, missing FROM files") {
                guard let path = row[0].text, let shot = row[1].integer else { continue }
                known[path] = (shot, row[2].integer == 1)
            }
            return known
        }
    }

    func setMissing(_ paths: [String], _ missing: Bool) throws(CatalogueError) {
        guard !paths.isEmpty else { return }
        try run {
            try database.transaction {
                for path in paths { try database.query("UPDATE files SET missing = ? WHERE path = ?", [.integer(missing ? 1 : 0), .text(path)]) }
            }
        }
    }

    func attach(_ files: [CatalogueFile], to shot: Int) throws(CatalogueError) {
        try run {
            try database.transaction {
                for file in files {
                    try insert(file, shot: shot)
                    try database.query("INSERT OR IGNORE INTO frames(shot_id, camera) VALUES (?, ?)", [.integer(Int64(shot)), .text(file.camera ?? "")])
                }
            }
        }
    }

    /// Runs a database step, turning its errors into ``CatalogueError``.
    func run<T>(_ body: () throws -> T) throws(CatalogueError) -> T {
        do { return try body() } catch let error as CatalogueError { throw error } catch let error as SQLiteError {
            throw CatalogueError(error)
        } catch {
            throw CatalogueError("catalogue '\(path)': \(error)")
        }
    }
}
