#if canImport(Glibc)
import Glibc
#endif
@testable import GPhoto2Backend
import ShutterPipeKit
import Testing

@Suite("camera worker: the user it runs as")
struct WorkerUserTests {
    @Test("not root: the worker runs as the session's user, whatever the config names; root: 'root' keeps root")
    func notRoot() throws {
        #expect(try WorkerUser.resolve(nil, euid: 1000) == nil)
        #expect(try WorkerUser.resolve("someone", euid: 1000) == nil)
        #expect(try WorkerUser.resolve("root", euid: 0) == nil)
    }

    @Test("under root, a named user that does not exist is an error naming it and how to make it; the default user is never such an error")
    func missingUser() throws {
        let error = try #require(throws: ShutterError.self) { try WorkerUser.resolve("shutterpipe-no-such-user", euid: 0) }
        #expect(error.message.contains("'shutterpipe-no-such-user' does not exist") && error.fix?.contains("useradd --system") == true)
        // A user the system has is taken with its groups.
        let root = try #require(WorkerUser.lookUp("root"))
        #expect(root.uid == 0 && root.groups.contains(0))
    }

    @Test("the default user, named in the config or not, is the same unprivileged user (made by useradd when missing; needs root)", .enabled(if: geteuid() == 0, "needs root: it runs useradd"))
    func defaultUser() throws {
        let implicit = try #require(try WorkerUser.resolve(nil, euid: 0))
        let named = try #require(try WorkerUser.resolve(WorkerUser.defaultName, euid: 0))
        #expect(implicit.name == WorkerUser.defaultName && implicit.uid == named.uid && implicit.uid != 0)
    }
}
