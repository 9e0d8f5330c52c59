#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// The unprivileged user a camera worker switches to when the session runs as root.
///
/// `workerUser` in the config names it; by default it is `shutterpipe-camera`, a system
/// user made the first time it is needed (`useradd --system`, in the `plugdev` group that
/// Debian's udev rules give cameras; the `.deb` makes it at install). A session that is
/// not root runs its workers as itself.
enum WorkerUser {
    /// The default user's name.
    static let defaultName = "shutterpipe-camera"

    private static let made = Mutex<[String: WorkerConfinement.User]>([:])
    /// One useradd at a time (the workers of a rig start together).
    private static let making = NSLock()

    /// The user for a worker of a session running as `euid`: nil when not root or when
    /// the config says `root`. Throws when a named user does not exist or the default one
    /// cannot be made.
    static func resolve(_ name: String?, euid: uid_t = geteuid()) throws(ShutterError) -> WorkerConfinement.User? {
        guard euid == 0 else { return nil }
        let wanted = name ?? defaultName
        if wanted == "root" { return nil }
        if let known = made.withLock({ $0[wanted] }) { return known }
        if let user = lookUp(wanted) {
            made.withLock { $0[wanted] = user }
            return user
        }
        // The default user is made when missing, named in the config or not; another must exist.
        guard name == nil || name == defaultName else {
            throw ShutterError(.cameraFailure, "the camera worker's user '\(wanted)' does not exist",
                               fix: "create it (useradd --system --groups plugdev \(wanted)), or remove 'workerUser' to use \(defaultName)")
        }
        making.lock()
        defer { making.unlock() }
        if lookUp(wanted) == nil { try make(wanted) }
        guard let user = lookUp(wanted) else {
            throw ShutterError(.cameraFailure, "useradd made no user '\(wanted)'", fix: "create it by hand, or set 'workerUser'")
        }
        made.withLock { $0[wanted] = user }
        return user
    }

    /// A user's ids and groups, from the system's user database.
    static func lookUp(_ name: String) -> WorkerConfinement.User? {
        guard let entry = getpwnam(name) else { return nil }
        let uid = entry.pointee.pw_uid, gid = entry.pointee.pw_gid
        var count: Int32 = 64
        var groups = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(name, gid, &groups, &count) < 0 {
            groups = [gid_t](repeating: 0, count: Int(count))
            _ = getgrouplist(name, gid, &groups, &count)
        }
        return WorkerConfinement.User(name: name, uid: uid, gid: gid, groups: Array(groups.prefix(Int(max(count, 0)))))
    }

    private static func make(_ name: String) throws(ShutterError) {
        var arguments = ["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", "--user-group"]
        if getgrnam("plugdev") != nil { arguments += ["--groups", "plugdev"] }
        arguments.append(name)
        let status: ChildProcess.ExitStatus?
        do {
            let child = try ChildProcess(arguments, input: .null, output: .null, error: .null)
            status = child.waitUntilExit(timeout: .seconds(20))
            if status == nil { child.signal(SIGKILL) }
        } catch {
            throw ShutterError(.cameraFailure, "cannot make the camera worker's user '\(name)': \(error)",
                               fix: "create it (useradd --system --groups plugdev \(name)), or set 'workerUser'")
        }
        guard case .exited(0)? = status else {
            throw ShutterError(.cameraFailure, "cannot make the camera worker's user '\(name)': useradd \(status.map { "\($0)" } ?? "did not finish in 20 s")",
                               fix: "create it (useradd --system --groups plugdev \(name)), or set 'workerUser'")
        }
    }
}
