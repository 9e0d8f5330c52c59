import CGPhoto2
import Foundation
import Synchronization

/// What libgphoto2 says at error level during one call, for the few complaints that mean
/// a photo is out of reach and that it reports no other way.
///
/// The one that matters: listing a folder that holds two objects of one name (a shot
/// given the name of a kept one, on a camera that reuses names), libgphoto2 lists the
/// first and logs "Duplicate filename 'NAME' in folder 'FOLDER'. Ignoring nth entry."
/// (2.5.30; "Duplicate entry" in later versions). The
/// second is then never announced, listed, fetched or deleted: it stays on the card
/// unseen unless that line is said (``CameraSession`` warns with the fix).
///
/// A log function is registered for the call only: with any registered, libgphoto2
/// 2.5.30 formats a hexdump of every packet, so none stays for downloads. Every call
/// runs on the camera thread, one at a time.
enum LibraryComplaints {
    private static let heard = Mutex<[String]>([])

    /// Runs `body` with libgphoto2's error-level lines collected; returns its result and
    /// the lines.
    static func collecting<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> (T, [String]) {
        heard.withLock { $0 = [] }
        let id = gp_log_add_func(GP_LOG_ERROR, { _, _, text, _ in
            guard let text else { return }
            let line = String(cString: text)
            LibraryComplaints.heard.withLock { if $0.count < 64 { $0.append(line) } }
        }, nil)
        defer { if id >= 0 { gp_log_remove_func(id) } }
        let value = try body()
        return (value, heard.withLock { $0 })
    }

    /// The names of "Duplicate filename 'NAME' in folder 'FOLDER'" lines (or "Duplicate
    /// entry", as later libgphoto2 says), as (folder, name).
    static func duplicateEntries(in lines: [String]) -> [(folder: String, name: String)] {
        lines.compactMap { line in
            guard let start = line.range(of: "Duplicate filename '") ?? line.range(of: "Duplicate entry '"), let middle = line.range(of: "' in folder '", range: start.upperBound..<line.endIndex),
                  let end = line.range(of: "'", range: middle.upperBound..<line.endIndex) else { return nil }
            return (String(line[middle.upperBound..<end.lowerBound]), String(line[start.upperBound..<middle.lowerBound]))
        }
    }
}
