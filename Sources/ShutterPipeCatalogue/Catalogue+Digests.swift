import Foundation

/// Digests recorded after the fact: a sink that hashes what it wrote gives them as it
/// goes (``ShotCatalogue/recordDigest(of:sha256:)``); for the others' files the writer
/// records shots without their SHA-256 (reading 50 MB a shot back would take the CPU and
/// the disk from the shots), and fills them in once the session is quiet, or at the next
/// start.
extension Catalogue {
    /// Up to `limit` files on disk whose digest is not recorded yet, oldest first.
    func undigestedFiles(limit: Int) throws(CatalogueError) -> [String] {
        try run {
            try database.query("SELECT path FROM files WHERE sha256 IS NULL AND missing = 0 ORDER BY id LIMIT ?", [.integer(Int64(limit))])
                .compactMap { $0.first?.text }
        }
    }

    /// Records the digest a sink computed for the file at `path` (when none is recorded
    /// yet); returns whether the file is recorded at all (if not, its shot is still to come).
    func applyDigest(_ digest: String, of path: String) throws(CatalogueError) -> Bool {
        try run {
            guard try !database.query("SELECT 1 FROM files WHERE path = ?", [.text(path)]).isEmpty else { return false }
            _ = try database.query("UPDATE files SET sha256 = ? WHERE path = ? AND sha256 IS NULL", [.text(digest), .text(path)])
            return true
        }
    }

    /// Records the digest of the file at `path`, if it is still not recorded (a file
    /// rewritten meanwhile, marks in a JPEG, got its own).
    func setDigest(_ digest: String, of path: String) throws(CatalogueError) {
        try run { _ = try database.query("UPDATE files SET sha256 = ? WHERE path = ? AND sha256 IS NULL", [.text(digest), .text(path)]) }
    }
}
