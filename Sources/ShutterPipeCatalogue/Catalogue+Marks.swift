import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// Ratings, labels, picks and keywords: marks go to a shot's frames and are summed up into
/// the shot's own.
extension Catalogue {
    /// Which frames of a shot a mark goes to.
    public enum Frames: Sendable, Equatable {
        /// Every frame: the whole shot.
        case all
        /// The frame of this camera (`nil`: a session's only camera).
        case camera(String?)
    }

    /// Sets what is given (`nil`: unchanged) on `frames` of the shot, sums its frames up
    /// into the shot's own marks, and returns the shot as it is now; throws for an id the
    /// catalogue does not have.
    @discardableResult
    public func mark(_ id: Int, frames: Frames = .all, rating: Int? = nil, label: String?? = nil, pick: Pick? = nil) throws(CatalogueError) -> CatalogueShot {
        try run {
            try database.transaction {
                var condition = "shot_id = ?"
                var key: [SQLiteValue] = [.integer(Int64(id))]
                if case .camera(let camera) = frames { condition += " AND camera = ?"; key.append(.text(camera ?? "")) }
                if let rating { try database.query("UPDATE frames SET rating = ? WHERE \(condition)", [.integer(Int64(rating))] + key) }
                if let label { try database.query("UPDATE frames SET label = ? WHERE \(condition)", [SQLiteValue(label)] + key) }
                if let pick { try database.query("UPDATE frames SET pick = ? WHERE \(condition)", [.integer(Int64(pick.rawValue))] + key) }
                try sumUpFrames(of: id)
            }
        }
        guard let shot = try shot(id) else {
            throw CatalogueError("no shot \(id) in the catalogue '\(path)'; 'shutterpipe shots' lists the ids")
        }
        return shot
    }

    /// The shot's own marks from its frames' (``CatalogueFrame/summary(of:)``).
    private func sumUpFrames(of id: Int) throws {
        let marks = try database.query("SELECT rating, label, pick FROM frames WHERE shot_id = ? ORDER BY id", [.integer(Int64(id))]).map { row in
            ShotMarks(rating: row[0].integer ?? 0, label: row[1].text, pick: Pick(rawValue: row[2].integer ?? 0) ?? .none)
        }
        guard !marks.isEmpty else { return }
        let summary = CatalogueFrame.summary(of: marks)
        try database.query("UPDATE shots SET rating = ?, label = ?, pick = ? WHERE id = ?",
                           [.integer(Int64(summary.rating)), SQLiteValue(summary.label), .integer(Int64(summary.pick.rawValue)), .integer(Int64(id))])
    }

    /// Reads a recorded file's size and digest again (after its marks were written into it).
    public func refreshFile(_ path: String) throws(CatalogueError) {
        let size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
        let digest = FileDigest.sha256(of: path)
        try run { _ = try database.query("UPDATE files SET size = ?, sha256 = ? WHERE path = ?", [.integer(Int64(size)), SQLiteValue(digest), .text(path)]) }
    }

    /// Replaces a shot's keywords.
    public func setKeywords(_ id: Int, _ keywords: [String]) throws(CatalogueError) {
        try run {
            try database.transaction {
                try database.query("DELETE FROM keywords WHERE shot_id = ?", [.integer(Int64(id))])
                for keyword in Set(keywords) {
                    try database.query("INSERT INTO keywords(shot_id, keyword) VALUES (?, ?)", [.integer(Int64(id)), .text(keyword)])
                }
            }
        }
    }
}
