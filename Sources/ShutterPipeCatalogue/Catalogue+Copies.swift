import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// The copies made of each file after its answer (mirrors, uploads): schema 4's `copies`.
extension Catalogue {
    /// Records a copy of the file at `path`; returns its shot's id, `nil` when no such file
    /// is recorded (yet).
    func recordCopy(of path: String, _ copy: FileCopy) throws(CatalogueError) -> Int? {
        try run {
            guard let row = try database.query("SELECT id, shot_id FROM files WHERE path = ?", [.text(path)]).first,
                  let file = row[0].integer, let shot = row[1].integer else { return nil }
            try database.query("""
                INSERT INTO copies(file_id, destination, location, time) VALUES (?, ?, ?, ?)
                ON CONFLICT(file_id, destination) DO UPDATE SET location = excluded.location, time = excluded.time
                """, [.integer(Int64(file)), .text(copy.destination), SQLiteValue(copy.location), .real(copy.time.timeIntervalSince1970)])
            return shot
        }
    }

    /// Adds to `shots` (at their `index` positions) the copies of their files.
    func attachCopies(to shots: inout [CatalogueShot], index: [Int: Int], selection: String, _ values: [SQLiteValue]) throws {
        let query = "SELECT f.shot_id, f.path, c.destination, c.location, c.time FROM copies c JOIN files f ON f.id = c.file_id WHERE f.shot_id \(selection) ORDER BY c.time"
        for row in try database.query(query, values) {
            guard let shot = row[0].integer, let position = index[shot], let path = row[1].text,
                  let file = shots[position].files.firstIndex(where: { $0.path == path }) else { continue }
            // Masked again as read: a row an older version wrote may name a secret.
            shots[position].files[file].copies.append(FileCopy(destination: SecretText.masked(row[2].text ?? ""), location: row[3].text.map(SecretText.masked),
                                                               time: Date(timeIntervalSince1970: row[4].real ?? 0)))
        }
    }
}
