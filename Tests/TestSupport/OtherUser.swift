#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Another user of this machine, made for the tests that act as someone else (a second
/// user writing a shared folder, squatting a socket path) with `useradd`. Only root can
/// make it, hand it a folder (chown) or run a program as it (setpriv): a test that uses it
/// says so with `.requiresRoot`.
public struct OtherUser: Sendable {
    public static let name = "shutterpipe-other"
    public let uid: uid_t
    public let gid: gid_t

    /// The user, made when missing.
    public static func make() async throws -> OtherUser {
        guard Privileges.isRoot else {
            throw TestSupportError("this case acts as a second user ('\(name)'): it needs root, and this test runs as uid \(geteuid())")
        }
        if getpwnam(name) == nil {
            let made = try await runProgram(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name])
            guard made.status == 0 || getpwnam(name) != nil else {
                throw TestSupportError("cannot create the user '\(name)' (useradd: \(made.status)): \(made.errors)")
            }
        }
        guard let entry = getpwnam(name) else { throw TestSupportError("no user '\(name)'") }
        return OtherUser(uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
    }

    /// `arguments` prefixed to run as this user (setpriv, no supplementary groups).
    public func command(_ arguments: [String]) -> [String] {
        ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups"] + arguments
    }

    /// Runs `arguments` as this user, to its end (``runProgram(_:environment:input:in:timeout:)``).
    public func run(_ arguments: [String], in directory: String? = nil, timeout: Duration = .seconds(60)) async throws -> ProgramOutput {
        try await runProgram(command(arguments), environment: ["HOME": "/"], in: directory, timeout: timeout)
    }

    /// Gives `path` to this user.
    public func own(_ path: String) throws {
        guard chown(path, uid, gid) == 0 else { throw TestSupportError("chown '\(path)': \(String(cString: strerror(errno)))") }
    }
}
