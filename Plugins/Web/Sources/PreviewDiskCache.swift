#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// Previews kept on disk beside the catalogue (`.shutterpipe/.cache/web/previews/`), so a
/// preview is made once, not once per start: a restarted session, or a phone that opens
/// the page after lunch, gets the morning's previews at the cost of reading a file.
///
/// - A preview's file name is a 64-bit FNV-1a hash of the photo's path, size and
///   modification time and the preview's size: a photo rewritten (marks in a JPEG) gets a
///   new preview, and a stale one is never served.
/// - Files are written to a temporary name and renamed: a reader never sees half a
///   preview. They are not fsynced: a preview lost to a power cut is made again.
/// - Bounded: when the folder holds more than `limit` bytes, the previews used longest
///   ago go first (each hit touches its file's modification time).
/// - Any failure (a full disk, a read-only folder) only costs the cache: the preview is
///   served from memory all the same.
final class PreviewDiskCache: Sendable {
    let folder: String
    let limit: Int64
    private let state = Mutex<(bytes: Int64?, failed: Bool)>((nil, false))
    private let log: Logger

    init(folder: String, limit: Int64, log: Logger) {
        self.folder = folder
        self.limit = limit
        self.log = log
    }

    /// The file of the preview of `key` (photo path, size, mtime), `longEdge` long.
    func file(for key: String, longEdge: Int) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "\(key)|\(longEdge)".utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return "\(folder)/\(String(format: "%016llx", hash)).jpg"
    }

    /// The cached preview, if any; a hit marks it as used now.
    func read(_ key: String, longEdge: Int) -> Data? {
        let path = file(for: key, longEdge: longEdge)
        // Never through a link, and never more than a preview's worth.
        guard let data = try? UntrustedFile.contents(of: path, limits: .init(bytes: 64 << 20)), !data.isEmpty else { return nil }
        _ = utimes(path, nil)
        return data
    }

    /// Keeps a preview; evicts the least recently used ones beyond the limit.
    func write(_ data: Data, key: String, longEdge: Int) {
        let path = file(for: key, longEdge: longEdge)
        let temporary = "\(folder)/.\(UUID().uuidString).tmp"
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Self.writeUnsynced(data, to: temporary)
            guard rename(temporary, path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        } catch {
            unlink(temporary)
            let first = state.withLock { state in defer { state.failed = true }; return !state.failed }
            if first { log.warning("preview cache '\(folder)': \(error.localizedDescription); previews are made again after a restart") }
            return
        }
        let total = state.withLock { state -> Int64 in
            let bytes = (state.bytes ?? usage()) + Int64(data.count)
            state.bytes = bytes
            return bytes
        }
        if total > limit { evict(keeping: path) }
    }

    /// Writes a new file without fsync (Foundation's `Data.write` fsyncs on Linux, which
    /// cost each preview a wait for the disk, beside the photos' own fsyncs).
    private static func writeUnsynced(_ data: Data, to path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        try DescriptorIO.writeAll(data, to: descriptor)
    }

    /// Bytes of previews in the folder now.
    private func usage() -> Int64 {
        previews().reduce(0) { $0 + $1.size }
    }

    private func previews() -> [(path: String, size: Int64, used: Double)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasSuffix(".jpg") }.compactMap { name in
            var info = stat()
            let path = "\(folder)/\(name)"
            guard stat(path, &info) == 0 else { return nil }
            return (path, Int64(info.st_size), Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
        }
    }

    /// Removes the previews used longest ago, never `kept` (the one just written), until the
    /// folder holds at most 90 % of the limit.
    private func evict(keeping kept: String) {
        var files = previews().sorted { $0.used < $1.used }
        let keptSize = files.first { $0.path == kept }?.size ?? 0
        files.removeAll { $0.path == kept }
        var total = files.reduce(keptSize) { $0 + $1.size }
        let target = limit / 10 * 9
        while total > target, !files.isEmpty {
            let oldest = files.removeFirst()
            if unlink(oldest.path) == 0 { total -= oldest.size }
        }
        state.withLock { $0.bytes = total }
    }
}
