import Foundation
import ShutterPipeSupport
import GPhoto2Backend

/// The card deletes asked for and not done yet. A stored shot is deleted from the card
/// when the camera is idle, not between the shots of a burst; until then its delete waits
/// here, in a file of the worker's own folder (its `HOME`, the camera's settings folder),
/// so that a kill -9, a crash or an unplug loses none: the next worker does it once the
/// camera is open again.
///
/// Confined to the camera thread.
final class PendingDeletes {
    /// One file to delete: where it is, and what it was when stored (to tell it from a
    /// new file given the same name later).
    struct Entry: Codable, Equatable {
        var serial: String?
        var path: CardPath
        var size: Int?
        var modified: Int?
    }

    /// The list's file, if the worker has a folder.
    let file: String?
    private(set) var entries: [Entry] = []
    private var saveFailureLogged = false

    init(folder: String?) {
        file = folder.map { "\($0)/pending-card-deletes.json" }
        if let file, let data = FileManager.default.contents(atPath: file) {
            entries = (try? JSONDecoder().decode([Entry].self, from: data)) ?? []
        }
    }

    var isEmpty: Bool { entries.isEmpty }

    /// The entries of the camera with this serial number (and those stored without one).
    func entries(for serial: String?) -> [Entry] {
        entries.filter { $0.serial == nil || serial == nil || $0.serial == serial }
    }

    func add(_ new: [Entry]) {
        entries += new.filter { !entries.contains($0) }
        save()
    }

    func remove(_ entry: Entry) {
        entries.removeAll { $0 == entry }
        save()
    }

    /// Writes the list whole: a temporary file, fsync, rename, fsync of the folder. A
    /// failure (a full disk) is logged once; the list is still kept in memory.
    private func save() {
        guard let file else { return }
        do {
            // Never through a link (a fixed `.tmp` name opened with O_TRUNC followed one).
            try DurableFile.replace(file, with: try JSONEncoder().encode(entries))
            saveFailureLogged = false
        } catch {
            guard !saveFailureLogged else { return }
            saveFailureLogged = true
            WorkerLog.warning("could not keep the list of card deletes to do: \(error); they are kept until this worker ends")
        }
    }

    private struct SaveError: Error, CustomStringConvertible {
        var what: String
        var code: Int32
        var description: String { "\(what): \(String(cString: strerror(code)))" }
    }
}
