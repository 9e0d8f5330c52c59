#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeSupport
import GPhoto2Backend

/// The card files of one camera body whose shots are stored durably, so that a catch-up
/// (`importOnConnect`) never imports one twice, across reconnections and restarts.
///
/// A file is known by its folder, name, size and time on the card: a camera that reuses a
/// name (after its counter wraps, or a card formatted) makes another file. The time only
/// where it is the camera's own (a file met in a listing): for a file a capture or a
/// button shot brought, libgphoto2 says the computer's time instead, which the next
/// listing does not repeat (a body's clock is set by hand), so such a file is known by its
/// folder, name and size. The record is
/// a text file per body (by serial) in the camera's settings folder, a line per file,
/// appended and fsynced when the session says the file's shot is stored.
struct DeliveredLedger {
    /// The body: its serial, else its model and port.
    let body: String
    let path: String
    /// Whether the file existed when this worker first read it: a camera never seen before
    /// has its card's files as they are taken as known (`importOnConnect: new`).
    private(set) var existed: Bool
    /// The record is there but cannot be read (its mode, a damaged disk): a catch-up
    /// would take every file for new, so none is made.
    let unreadable: Bool
    private(set) var known: Set<String>

    init(folder: String, body: String) {
        self.body = body
        let safe = body.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) || "-_".unicodeScalars.contains($0) ? String($0) : "_" }.joined()
        path = "\(folder)/delivered-\(safe.isEmpty ? "camera" : safe).txt"
        let text = FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
        existed = text != nil
        unreadable = text == nil && FileManager.default.fileExists(atPath: path)
        known = Set((text ?? "").split(separator: "\n").map(String.init))
    }

    static func key(_ file: GPhotoCamera.AddedFile) -> String {
        "\(file.path.folder)/\(file.path.name)\t\(file.size.map(String.init) ?? "?")\t\(file.cameraTime.map(String.init) ?? "?")"
    }

    /// Known by its key, or by folder, name and size where its time was not known when
    /// it was recorded.
    func contains(_ file: GPhotoCamera.AddedFile) -> Bool {
        var timeless = file
        timeless.modified = nil
        return known.contains(Self.key(file)) || known.contains(Self.key(timeless))
    }

    /// Records `files` durably (append, fsync); false when the record could not be written.
    @discardableResult
    mutating func add(_ files: [GPhotoCamera.AddedFile]) -> Bool {
        let new = files.map(Self.key).filter { !known.contains($0) }
        guard !new.isEmpty || !existed else { return true }
        do { try DurableFile.append(Data(new.map { $0 + "\n" }.joined().utf8), to: path) } catch { return false }
        known.formUnion(new)
        existed = true
        return true
    }
}
