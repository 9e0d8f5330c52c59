#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeSupport
import SocketTrigger
import TestSupport
import Testing

@Suite("socket trigger: who owns the socket", .serialized, .timeLimit(.minutes(3)),
       .requiresRoot("it makes a second user with useradd, gives it a folder and runs shutterpipe as it"))
struct SocketOwnershipTests {
    @Test("without XDG_RUNTIME_DIR the socket goes in a 0700 folder of this user's; a folder of that name that another user owns is refused")
    func fallbackFolder() async throws {
        let other = try await OtherUser.make()
        let folder = TemporaryDirectory("socket-fallback")
        let fallback = SocketProtocol.fallbackFolder
        let noRuntime = ["XDG_RUNTIME_DIR": ""]
        let config = try writeConfig("""
        version: 1
        backend: {type: file-stub, width: 64, height: 48}
        triggers: [{type: socket}]
        sinks: [{type: files, directory: \(folder.file("out"))}]
        """, in: folder)
        // A leftover of an earlier run goes first, so the folder is made by the session.
        _ = try? FileManager.default.removeItem(atPath: fallback)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: noRuntime)
        #expect(await eventually { FileManager.default.fileExists(atPath: "\(fallback)/shutterpipe.sock") }, "\(session.stderrSoFar.suffix(800))")
        var info = stat()
        #expect(lstat(fallback, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700 && info.st_uid == geteuid())
        let shot = try await shutterpipe(["trigger", "capture"], in: folder.path, environment: noRuntime)
        #expect(shot.status == 0, "\(shot.stdout) \(shot.stderr)")
        session.signal(SIGTERM)
        #expect(await session.wait().status == 0)

        // Another user made the folder first: the session refuses to listen in it.
        try #require(chown(fallback, other.uid, other.gid) == 0, "chown: \(String(cString: strerror(errno)))")
        defer { _ = try? FileManager.default.removeItem(atPath: fallback) }
        let refused = try await shutterpipe(["run", "--config", config], in: folder.path, environment: noRuntime)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("'\(fallback)' belongs to shutterpipe-other"), "\(refused.stderr)")
        #expect(refused.stderr.contains("remove '\(fallback)'"))
        // Open to others is refused as well.
        try #require(chown(fallback, geteuid(), getegid()) == 0 && chmod(fallback, 0o777) == 0)
        let open = try await shutterpipe(["run", "--config", config], in: folder.path, environment: noRuntime)
        #expect(open.status == 1 && open.stderr.contains("can be entered by other users"), "\(open.stderr)")
    }

    @Test("another user's session on the path: run does not take the socket over, and the client sends it nothing")
    func anotherUsersSocket() async throws {
        let other = try await OtherUser.make()
        let folder = TemporaryDirectory("socket-squat")
        #expect(chmod(folder.path, 0o1777) == 0)  // a shared folder, as /tmp is
        let path = folder.file("shared.sock")
        let config = try writeConfig("""
        version: 1
        backend: {type: file-stub, width: 64, height: 48}
        triggers: [{type: socket, path: \(path)}]
        sinks: [{type: files, directory: \(folder.file("theirs"))}]
        """, in: folder)
        #expect(chmod(config, 0o644) == 0)
        // The other user's session, started as that user, from a copy it can reach (the
        // checkout may be in a home folder only its owner can enter).
        let theirs = try shutterpipeForAnyUser(in: folder)
        let squatter = try await RunningProcess.start(program: "/usr/bin/setpriv",
                                          ["--reuid=\(other.uid)", "--regid=\(other.gid)", "--clear-groups", theirs, "run", "--config", config],
                                          in: folder.path, environment: ["HOME": folder.path])
        let listening = await eventually {
            let probe = connectUnixSocket(path)
            if probe >= 0 { close(probe) }
            return probe >= 0 || !squatter.isRunning
        }
        // Without the other user's session on the path, the rest would test nothing (and
        // our own run would take the socket and serve it).
        try #require(listening && squatter.isRunning, "the other user's session did not start\n\(squatter.lastLines())")
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_uid == other.uid)

        let ours = try await shutterpipe(["run", "--config", config], in: folder.path)
        #expect(ours.status == 1)
        #expect(ours.stderr.contains("'\(path)' belongs to shutterpipe-other, not to this user; it is not replaced"), "\(ours.stderr)")

        let asked = try await shutterpipe(["trigger", "capture", "--socket", path], in: folder.path)
        #expect(asked.status == 1)
        #expect(asked.stderr.contains("is served by shutterpipe-other, not by you; nothing was sent"), "\(asked.stderr)")
        squatter.signal(SIGTERM)
        #expect(await squatter.wait().status == 0)
        #expect(!FileManager.default.fileExists(atPath: folder.file("theirs")) || folder.names("theirs").filter { $0.hasSuffix(".jpg") }.isEmpty,
                "the other user's session took a photo for us")
    }
}
