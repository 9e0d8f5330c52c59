import Foundation
import Synchronization

/// Files to remove however the process ends, as long as it can run code: a socket file
/// that would otherwise be left behind when a second SIGTERM ends the session at once.
/// A plugin registers what it made and unregisters it once it removed it itself.
///
/// In the contract, not in ShutterPipeSupport, because it must be one list for the host
/// and every plugin: each plugin carries its own copy of Support. (Added in ABI 3: a
/// plugin that uses it needs a host of this release or later.)
public enum ExitCleanup {
    private static let paths = Mutex<Set<String>>([])

    /// Removes `path` at an abrupt exit (``removeAll()``).
    public static func register(_ path: String) {
        paths.withLock { _ = $0.insert(path) }
    }

    /// No longer removes `path` (its owner removed it, or it is needed after exit).
    public static func unregister(_ path: String) {
        paths.withLock { _ = $0.remove(path) }
    }

    /// Removes every registered file. For the last moments before `_exit`; safe to call
    /// from a signal source's handler (not from a raw signal handler).
    public static func removeAll() {
        for path in paths.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
    }
}
