#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeSupport
import Testing

/// What a test needs from the machine beyond an ordinary user's rights.
public enum Privileges {
    /// Whether the tests run as root.
    public static var isRoot: Bool { geteuid() == 0 }

    /// `CI=true`: CI runs as root, and there every test runs; a test that needs root and
    /// does not have it fails there instead of being skipped.
    public static var inCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// Whether this user may make a user and mount namespace (`unshare -rm`), where it can
    /// mount a tmpfs of its own: root can; other users can unless the system forbids it
    /// (Ubuntu 24.04's AppArmor does by default).
    public static let canUnshareMounts: Bool = {
        guard let probe = try? ChildProcess.run(["/usr/bin/unshare", "-rm", "true"], timeout: .seconds(30)) else { return false }
        return probe.status.succeeded
    }()
}

extension Trait where Self == ConditionTrait {
    /// Runs the test where it can mount a tmpfs in a namespace of its own (always under
    /// `CI=true`); elsewhere it is skipped, with `reason` on one line.
    public static func requiresMountNamespace(_ reason: String) -> Self {
        .enabled(if: Privileges.canUnshareMounts || Privileges.inCI,
                 Comment(rawValue: "needs a user and mount namespace (unshare -rm), which this system refuses to this user: \(reason)"))
    }

    /// Runs the test as root (always under `CI=true`); elsewhere it is skipped, and the
    /// test runner lists it with `reason` on one line.
    public static func requiresRoot(_ reason: String) -> Self {
        .enabled(if: Privileges.isRoot || Privileges.inCI, Comment(rawValue: "needs root: \(reason)"))
    }
}

/// A copy of the built `shutterpipe` that any user can run: the executable and the core
/// library it loads from its own folder, in a world-readable folder of `folder`. A test
/// that runs shutterpipe as another user needs it, since the checkout may sit in a home
/// folder only its owner can enter.
public func shutterpipeForAnyUser(in folder: TemporaryDirectory) throws -> String {
    let binary = try shutterpipeBinary()
    let built = (binary as NSString).deletingLastPathComponent
    let copy = folder.file("shutterpipe-for-any-user")
    try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
    for name in ["shutterpipe", "libShutterPipeKit.so"] {
        try copyTestFile("\(built)/\(name)", to: "\(copy)/\(name)")
    }
    for path in [folder.path, copy, "\(copy)/shutterpipe", "\(copy)/libShutterPipeKit.so"] {
        var info = stat()
        guard stat(path, &info) == 0 else { throw TestSupportError("cannot read '\(path)'") }
        chmod(path, (info.st_mode & 0o7777) | 0o055)  // others may enter, read and run
    }
    return "\(copy)/shutterpipe"
}
