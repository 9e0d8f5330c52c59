import Foundation

/// Digests recorded after the fact: during a burst the writer records shots without
/// their files' SHA-256 (reading 50 MB a shot would take the CPU and the disk from the
/// shots), and fills them in once the session is quiet, or at the next start.
extension Catalogue {
    /// Up to `limit` files on disk whose digest is not recorded yet, oldest first.
    func undigestedFiles(limit: Int) throws(CatalogueError) -> [String] {
        try run {
            try database.query("SELECT path FROM files WHERE sha256 IS NULL AND missing = 0 ORDER BY id LIMIT ?", [.integer(Int64(limit))])
                .compactMap { $0.first?.text }
        }
    }

    /// Records the digest of the file at `path`, if it is still not recorded (a file
    /// rewritten meanwhile, marks in a JPEG, got its own).
    func setDigest(_ digest: String, of path: String) throws(CatalogueError) {
        try run { _ = try database.query("UPDATE files SET sha256 = ? WHERE path = ? AND sha256 IS NULL", [.text(digest), .text(path)]) }
    }
}
