#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// A named temporary file whose writer holds an exclusive `flock` on it for its whole
/// life, so that a later run can tell a live writer's file from a killed one's by trying
/// the lock, not by a process ID (PIDs wrap at 32768 here and are reused: a leftover
/// whose number a new process took was kept for good).
///
/// For file systems without unnamed files (exFAT, NFS), and for the sequence file, which
/// replaces its predecessor. The lock goes when the descriptor closes, also when the
/// process is killed.
struct LockedTemporaryFile {
    /// The prefix of every temporary name: the cleaner looks for it.
    static let prefix = ".shutterpipe-tmp-"
    /// The suffix of every temporary name.
    static let suffix = ".tmp"

    /// The temporary name.
    let path: String
    /// The open descriptor (write-only), holding the lock.
    let descriptor: Int32

    /// Creates a new temporary file in `directory`, locked. `tag` goes before the suffix,
    /// so that what a leftover was for can be told from its name (`-seq`: the sequence file).
    static func create(in directory: String, tag: String = "") throws(SystemError) -> LockedTemporaryFile {
        for _ in 0..<16 {
            let path = "\(directory)/\(prefix)\(String(UInt64.random(in: 0...UInt64.max), radix: 36))\(tag)\(suffix)"
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if descriptor < 0 {
                if errno == EEXIST { continue }
                throw SystemError("create a temporary file in '\(directory)'")
            }
            // A cleaner may have taken the lock and removed the file between open and
            // flock; then the name is gone or another file's, and a new one is made.
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0, sameFile(descriptor, path) {
                return LockedTemporaryFile(path: path, descriptor: descriptor)
            }
            close(descriptor)
        }
        throw SystemError("create a temporary file in '\(directory)'", code: EAGAIN)
    }

    /// Writes every chunk; returns `errno` on failure.
    func write(_ chunks: [Data]) -> Int32 {
        Self.write(chunks, to: descriptor)
    }

    /// Writes every chunk to the new file at `descriptor`, which is fsynced next (the
    /// disk starts on each MiB as it is written: ``DurableFile/write(_:toNewFile:)``);
    /// returns `errno` on failure (the files sink's writes, named or unnamed).
    static func write(_ chunks: [Data], to descriptor: Int32) -> Int32 {
        do { try DurableFile.write(chunks, toNewFile: descriptor) } catch { return error.code }
        return 0
    }

    /// Removes the temporary name and releases the lock.
    func discard() {
        unlink(path)
        close(descriptor)
    }

    /// Removes the temporary files in `directory` whose writers are gone: a file whose
    /// lock can be taken belongs to nobody. Returns how many.
    @discardableResult
    static func removeAbandoned(in directory: String) -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return 0 }
        var removed = 0
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(suffix) {
            let path = "\(directory)/\(name)"
            let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { continue }  // a live writer holds it
            // Still the file we locked (not renamed into place meanwhile, not a new one)?
            guard sameFile(descriptor, path), unlink(path) == 0 else { continue }
            removed += 1
        }
        return removed
    }

    /// Whether `path` names the file open at `descriptor`.
    private static func sameFile(_ descriptor: Int32, _ path: String) -> Bool {
        var open = stat(), named = stat()
        guard fstat(descriptor, &open) == 0, lstat(path, &named) == 0 else { return false }
        return open.st_dev == named.st_dev && open.st_ino == named.st_ino
    }
}
