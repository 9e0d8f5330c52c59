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
///
/// Names are bytes, as the kernel gives them (inotify, `readdir`), looked at relative to
/// the folder's descriptor (``HotFolderDirectory``), never through a path built again.
/// `ready` runs on the watcher's thread and may block it (the hot folder's memory budget):
/// meanwhile the kernel queues the folder's events, and an overflow makes it look at
/// every file again.
final class FolderWatcher: @unchecked Sendable {  // `pending` and `stopping` are the thread's own, or under `lock`
    private let folder: HotFolderDirectory
    private let settle: Duration
    private let accepts: @Sendable ([UInt8]) -> Bool
    private let log: Logger
    private let ready: @Sendable ([UInt8]) -> Void
    private let lock = NSLock()
    private var stopping = false
    private var descriptor: Int32 = -1
    private var thread: OwnedThread?
    /// Files seen but not complete yet: their size and since when it has not changed.
    private var pending: [[UInt8]: (size: Int64, since: ContinuousClock.Instant)] = [:]

    init(folder: HotFolderDirectory, settle: Duration, log: Logger, accepts: @escaping @Sendable ([UInt8]) -> Bool, ready: @escaping @Sendable ([UInt8]) -> Void) {
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
        // Through the folder's descriptor: the folder that was opened, whatever its path
        // names meanwhile.
        guard inotify_add_watch(fd, "/proc/self/fd/\(folder.descriptor)", mask) >= 0 else {
            let code = errno
            close(fd)
            throw ShutterError(code == ENOSPC ? .unexpected : .invalidConfiguration,
                               "hotfolder: cannot watch '\(folder.path)': \(String(cString: strerror(code)))",
                               fix: code == ENOSPC ? "raise fs.inotify.max_user_watches (sysctl)" : "check that the folder exists and that this user may read it")
        }
        descriptor = fd
        scanAll()
        lock.withLock { thread = OwnedThread.start("shutterpipe hotfolder") { [self] in run() } }
    }

    /// Stops the thread (within a tenth of a second once `ready` returns) and closes the watch.
    func stop() {
        lock.withLock { stopping = true }
        while lock.withLock({ thread != nil }) { usleep(10_000) }
    }

    var isStopping: Bool { lock.withLock { stopping } }

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
        while offset + 16 <= count, !isStopping {
            let mask = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) }
            let length = Int(buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self) })
            let name = Array(buffer[(offset + 16)..<min(count, offset + 16 + length)].prefix { $0 != 0 })
            offset += 16 + length
            if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                log.warning("hotfolder: too many changes at once in '\(folder.path)'; looking at every file again")
                scanAll()
                continue
            }
            if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                log.error("hotfolder: '\(folder.path)' was removed or moved; no more files are taken from it until the session starts again")
                continue
            }
            guard !name.isEmpty else { continue }
            if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 {
                pending[name] = nil  // gone (or renamed: its new name comes as its own event)
                continue
            }
            guard accepts(name), let info = folder.status(of: name) else { continue }
            if info.st_mode & S_IFMT != S_IFREG || PathName.nameProblem(name) != nil {
                pending[name] = nil
                self.ready(name)  // a link, a FIFO, a folder, a name not taken: refused by name, now
            } else if mask & UInt32(IN_CLOSE_WRITE | IN_MOVED_TO) != 0 {
                pending[name] = nil
                if info.st_size > 0 { self.ready(name) }
            } else if pending[name]?.size != Int64(info.st_size) {
                pending[name] = (Int64(info.st_size), .now)
            }
        }
    }

    /// Hands over the files whose size stayed the same for `settle`.
    private func checkSettled() {
        let now = ContinuousClock.now
        for (name, seen) in pending {
            guard let info = folder.status(of: name), info.st_mode & S_IFMT == S_IFREG else { pending[name] = nil; continue }  // vanished
            let size = Int64(info.st_size)
            if size != seen.size { pending[name] = (size, now); continue }
            if size > 0 && now - seen.since >= settle {
                pending[name] = nil
                ready(name)
            }
        }
    }

    /// Every file there now: one untouched for `settle` is handed over at once, the others
    /// wait to settle. A name that is not a regular file (a link, a FIFO), or a name that
    /// is not taken, is handed over at once, to be refused by name.
    private func scanAll() {
        for (name, info) in folder.entries() where accepts(name) {
            guard !isStopping else { return }
            let age = Date().timeIntervalSince1970 - Double(info.st_mtim.tv_sec)
            let refusedNow = info.st_mode & S_IFMT != S_IFREG || PathName.nameProblem(name) != nil
            if refusedNow || (age * 1000 >= settle.milliseconds && info.st_size > 0) {
                ready(name)
            } else {
                pending[name] = (Int64(info.st_size), .now)
            }
        }
    }
}
