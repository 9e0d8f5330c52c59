#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// The files of a hot folder already taken, so that none is taken twice across restarts:
/// a line per file (name, size, modification time) in `.shutterpipe-hotfolder-ingested`,
/// appended and fsynced once every sink stored it. A file written again under its name
/// (another size or time) is a new file.
///
/// The ledger lies in a folder others write, so it is treated as theirs: opened relative
/// to the folder's descriptor without following a link or blocking, only when it is a
/// regular file with one name and at most ``limit`` bytes. A name is written with every
/// byte below 0x20, `%` and DEL as `%HH`, so no name can add a line of its own. A ledger
/// that is refused is said once, by name, with the fix; the session then remembers what it
/// took only until it ends.
final class IngestedLedger: Sendable {
    static let name = ".shutterpipe-hotfolder-ingested"
    /// The largest ledger read or appended to: about 200,000 files' lines.
    static let limit: Int64 = 16 << 20

    private let folder: HotFolderDirectory
    private let log: Logger
    private let known: Mutex<(keys: Set<String>, refused: Bool)>

    init(folder: HotFolderDirectory, log: Logger) {
        self.folder = folder
        self.log = log
        var keys = Set<String>()
        var refused = false
        do {
            let text = String(decoding: try folder.openFile(Array(Self.name.utf8), limits: .init(bytes: Self.limit)).read(), as: UTF8.self)
            keys = Set(text.split(separator: "\n").map(String.init))
        } catch where error.reason == .missing {
            // A fresh folder.
        } catch {
            refused = true
            Self.refusal(error, folder: folder, log: log)
        }
        known = Mutex((keys, refused))
    }

    private static func refusal(_ error: UntrustedFileError, folder: HotFolderDirectory, log: Logger) {
        log.error("hotfolder: the ledger '\(folder.path)/\(name)' is refused: \(error.why). Files taken are remembered only until the session ends, and may be taken again after a restart; remove it (the session makes a new one)")
    }

    /// The key of a file taken: its name (escaped), size and modification time.
    static func key(_ name: [UInt8], _ status: stat) -> String {
        var escaped: [UInt8] = []
        for byte in name {
            if byte < 0x20 || byte == 0x25 || byte == 0x7F {
                escaped += Array(String(format: "%%%02X", byte).utf8)
            } else {
                escaped.append(byte)
            }
        }
        let text = String(decoding: escaped, as: UTF8.self)
        return "\(text)\t\(status.st_size)\t\(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec)"
    }

    func contains(_ key: String) -> Bool { known.withLock { $0.keys.contains(key) } }

    /// Records a file durably; false when the record could not be written (said in the
    /// log, once).
    @discardableResult
    func add(_ key: String) -> Bool {
        let (inserted, refused) = known.withLock { ($0.keys.insert(key).inserted, $0.refused) }
        guard inserted else { return true }
        guard !refused else { return false }
        do {
            let ledger = try UntrustedFile.openForAppending(Array(Self.name.utf8), in: folder.descriptor, limits: .init(bytes: Self.limit), mode: 0o600)
            try ledger.append(Array((key + "\n").utf8))
            return true
        } catch {
            if !known.withLock({ state in defer { state.refused = true }; return state.refused }) {
                Self.refusal(error, folder: folder, log: log)
            }
            return false
        }
    }
}
