#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// Watches one folder with inotify, on a thread of its own, and hands over each file once
/// it is complete: closed after writing, or renamed into the folder, at once; a file whose
/// writer keeps it open, once its size has stayed the same for `settle`. Files there at
/// the start are looked at the same way. Hidden files and temporary names (`.part`,
/// `.tmp`, `~`, `.crdownload`) wait for their rename.
final class FolderWatcher: @unchecked Sendable {  // `pending` and `stopping` are the thread's own, or under `lock`
    private let folder: String
    private let settle: Duration
    private let accepts: @Sendable (String) -> Bool
    private let log: Logger
    private let ready: @Sendable (String) -> Void
    private let lock = NSLock()
    private var stopping = false
    private var descriptor: Int32 = -1
    private var thread: OwnedThread?
    /// Files seen but not complete yet: their size and since when it has not changed.
    private var pending: [String: (size: Int64, since: ContinuousClock.Instant)] = [:]

    init(folder: String, settle: Duration, log: Logger, accepts: @escaping @Sendable (String) -> Bool, ready: @escaping @Sendable (String) -> Void) {
        self.folder = folder
        self.settle = settle
        self.log = log
        self.accepts = accepts
        self.ready = ready
    }

    /// Starts watching; throws when the folder cannot be watched.
    func start() throws(ShutterError) {
        let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else { throw ShutterError(.unexpected, "hotfolder: inotify is not available: \(String(cString: strerror(errno)))") }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_MODIFY | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF)
        guard inotify_add_watch(fd, folder, mask) >= 0 else {
            let code = errno
            close(fd)
            throw ShutterError(code == ENOSPC ? .unexpected : .invalidConfiguration,
                               "hotfolder: cannot watch '\(folder)': \(String(cString: strerror(code)))",
                               fix: code == ENOSPC ? "raise fs.inotify.max_user_watches (sysctl)" : "check that the folder exists and that this user may read it")
        }
        descriptor = fd
        scanAll()
        lock.withLock { thread = OwnedThread.start("shutterpipe hotfolder") { [self] in run() } }
    }

    /// Stops the thread (within a tenth of a second) and closes the watch.
    func stop() {
        lock.withLock { stopping = true }
        while lock.withLock({ thread != nil }) { usleep(10_000) }
    }

    private var isStopping: Bool { lock.withLock { stopping } }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while !isStopping {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 100)
            if ready > 0 {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 { handle(buffer, count) }
            }
            checkSettled()
        }
        close(descriptor)
        lock.withLock { thread = nil }
    }

    /// One read's worth of `struct inotify_event`s.
    private func handle(_ buffer: [UInt8], _ count: Int) {
        var offset = 0
        while offset + 16 <= count {
            let mask = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) }
            let length = Int(buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self) })
            let nameBytes = buffer[(offset + 16)..<min(count, offset + 16 + length)].prefix { $0 != 0 }
            offset += 16 + length
            if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                log.warning("hotfolder: too many changes at once in '\(folder)'; looking at every file again")
                scanAll()
                continue
            }
            if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                log.error("hotfolder: '\(folder)' was removed or moved; no more files are taken from it until the session starts again")
                continue
            }
            let name = String(decoding: nameBytes, as: UTF8.self)
            guard !name.isEmpty else { continue }
            let path = "\(folder)/\(name)"
            if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 {
                pending[path] = nil  // gone (or renamed: its new name comes as its own event)
            } else if mask & UInt32(IN_CLOSE_WRITE | IN_MOVED_TO) != 0 {
                pending[path] = nil
                if accepts(name), Self.size(path).map({ $0 > 0 }) == true { self.ready(path) }
            } else if accepts(name), let size = Self.size(path) {
                if pending[path]?.size != size { pending[path] = (size, .now) }
            }
        }
    }

    /// Hands over the files whose size stayed the same for `settle`.
    private func checkSettled() {
        let now = ContinuousClock.now
        for (path, seen) in pending {
            guard let size = Self.size(path) else { pending[path] = nil; continue }  // vanished
            if size != seen.size { pending[path] = (size, now); continue }
            if size > 0 && now - seen.since >= settle {
                pending[path] = nil
                ready(path)
            }
        }
    }

    /// Every file there now: one untouched for `settle` is handed over at once, the others
    /// wait to settle.
    private func scanAll() {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
        for name in names where accepts(name) {
            let path = "\(folder)/\(name)"
            var info = stat()
            guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            let age = Date().timeIntervalSince1970 - Double(info.st_mtim.tv_sec)
            if age * 1000 >= settle.milliseconds, info.st_size > 0 {
                ready(path)
            } else {
                pending[path] = (Int64(info.st_size), .now)
            }
        }
    }

    static func size(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int64(info.st_size)
    }
}
