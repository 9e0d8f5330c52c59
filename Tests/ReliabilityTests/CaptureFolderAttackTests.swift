#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeFixtures
import TestSupport
import Testing

/// Case 21: whoever may write the capture folder (another user of a shared disk, a synced
/// folder) swaps what the session made there for symbolic links, in one shoot: a label's
/// folder, a stored photo waiting for its mirror and upload, the folder of a photo about
/// to be marked, and the catalogue's `.shutterpipe` before a restart. Each failed on the
/// code before its fix: the photo was written into the linked folder, the mirror and the
/// upload sent the private file, and the catalogue's claim was written through the link.
enum CaptureFolderAttack {
    /// The attacker's program, run in the capture folder: `OP NAME [ARG]`.
    static let program = """
    import os, sys
    op, name = sys.argv[1], sys.argv[2]
    os.chdir(sys.argv[3])
    if op == "rename": os.rename(name, sys.argv[4])
    elif op == "exchange":
        import ctypes
        # renameat2(RENAME_EXCHANGE): the two names swapped at once, never one missing.
        if ctypes.CDLL(None, use_errno=True).renameat2(-100, name.encode(), -100, sys.argv[4].encode(), 2) != 0:
            raise OSError(ctypes.get_errno(), "renameat2")
    elif op == "mkdir": os.mkdir(name, 0o755)
    elif op == "link": os.symlink(sys.argv[4], name)
    """

    static let secret = "TOP-SECRET-CAPTURE-0123456789"

    static func shoot(as other: OtherUser?) async throws {
        let server = try await RcloneServer(.webdav, "capture-folder")
        let folder = TemporaryDirectory("chaos-capture-folder")
        let shared = folder.file("shared"), keys = folder.file("private/keys"), mirror = folder.file("mirror")
        for path in [shared, keys, folder.file("queue")] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        chmod(folder.path, 0o711)  // the second user passes through to the shared folder
        chmod(folder.file("private"), 0o700)
        if other != nil { chmod(shared, 0o777) }  // a folder shared with another user
        try secret.writeTestFile(folder.file("private/secret"))
        chmod(folder.file("private/secret"), 0o600)
        // rclone, held until the test opens the gate: both photos then go in one batch.
        let gate = folder.file("gate-open")
        let wrapper = folder.file("rclone-gated")
        try """
        #!/bin/sh
        [ -e '\(gate)' ] || { echo 'the test holds the upload' >&2; exit 1; }
        exec /usr/bin/rclone "$@"
        """.writeTestFile(wrapper)
        chmod(wrapper, 0o755)
        let config = try writeConfig("""
        version: 1
        session: shared
        backend: {type: file-stub, width: 320, height: 240}
        triggers:
          - type: stdin
          - {type: socket, path: \(folder.file("s.sock"))}
        sinks:
          - {type: files, directory: \(shared), filename: "{label}/{seq:04}.{ext}", mirror: [\(mirror)]}
          - {type: upload, queueFolder: \(folder.file("queue")), rclone: \(wrapper), remote: "\(server.remote("shots"))"}
        """, in: folder)
        func attacker(_ arguments: String...) async throws {
            var command = ["/usr/bin/python3", "-c", program, arguments[0], arguments[1], shared] + arguments.dropFirst(2)
            if let other { command = other.command(command) }
            let done = try await runProgram(command, environment: ["HOME": "/"], timeout: .seconds(60))
            #expect(done.status == 0, "\(arguments): \(done.errors)")
        }

        let session = try await RunningProcess.start(["run", "--config", config, "--verbose", "--no-status"], in: folder.path)
        session.send("label A\ncapture\n")
        await session.waitForOutput(on: .stdout, "A stored") { count("photoSuccess", in: $0) >= 1 }
        // A's photo waits for its mirror (not plugged in) and its upload (held): it is
        // swapped for a link to a private file, in a folder of the attacker's own.
        // Made aside, then swapped in at once: whenever the mirror or the upload looks, A's
        // photo is the session's own or the link.
        try await attacker("mkdir", "A-swap")
        try await attacker("link", "A-swap/0001.jpg", folder.file("private/secret"))
        try await attacker("exchange", "A", "A-swap")
        // B's folder is a link before B's first shot.
        try await attacker("link", "B", keys)
        session.send("label B\ncapture\nlabel C\ncapture\n")
        await session.waitForOutput(on: .stdout, "B and C answered") { count("photoSuccess", in: $0) + count("photoFailed", in: $0) >= 3 }
        #expect(count("photoSuccess", in: session.stdoutSoFar) == 2, "\(session.stdoutSoFar)")
        #expect(session.stdoutSoFar.contains("photoFailed storageUnavailable: not stored in '\(shared)/B': '\(shared)/B' is a symbolic link (never followed"), "\(session.stdoutSoFar)")
        let stored = try #require(folder.names("shared/C").first { $0.hasSuffix(".jpg") })
        let photoC = try #require(FileManager.default.contents(atPath: "\(shared)/C/\(stored)"))

        // The mirror is plugged in and the upload let go: C arrives, A's link is refused.
        try FileManager.default.createDirectory(atPath: mirror, withIntermediateDirectories: true)
        try Data().writeTestFile(gate)
        #expect(await eventually { FileManager.default.contents(atPath: "\(mirror)/C/\(stored)") == photoC }, "\(session.stderrSoFar.suffix(2000))")
        #expect(await eventually { server.files().values.contains(photoC) }, "\(server.files().keys.sorted()) \(session.stderrSoFar.suffix(2000))")
        await session.waitForOutput("A refused by the mirror and the upload") {
            $0.contains("'\(shared)/A/0001.jpg' is not copied: it is a symbolic link") && $0.contains("'\(shared)/A/0001.jpg' is not uploaded: it is a symbolic link")
        }

        // C's folder becomes a link just before C is marked: no sidecar lands where it leads.
        await session.waitForOutput("C recorded") { shotsRecorded(in: $0) >= 3 }
        let listed = try await shutterpipe(["shots", "--json", "--config", config], in: folder.path)
        let shots = (try? JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]]) ?? []
        let idC = try #require(shots.first { ($0["files"] as? [[String: Any]])?.contains { ($0["path"] as? String)?.contains("/C/") == true } == true }?["id"] as? Int, "\(listed.stdout)")
        try await attacker("rename", "C", "C-kept")
        try await attacker("link", "C", keys)
        let rated = try await shutterpipe(["shots", "rate", String(idC), "5", "--socket", folder.file("s.sock")], in: folder.path)
        #expect(rated.status != 0 && (rated.stdout + rated.stderr).contains("a symbolic link inside the capture folder, which is never written through"), "\(rated.stdout) \(rated.stderr)")
        session.signal(SIGTERM)  // the socket keeps a session open after stdin ends
        let first = await session.wait(timeout: .seconds(60))
        #expect(first.status == 4, "one shot failed: \(first.stderr.suffix(1500))")

        // Before a restart, the catalogue's folder is swapped for a link to a private one.
        try await attacker("rename", ".shutterpipe", "catalogue-kept")
        try await attacker("link", ".shutterpipe", keys)
        let again = try await RunningProcess.start(["run", "--config", config, "--no-status"], in: folder.path)
        again.send("label D\ncapture\n")
        await again.waitForOutput(on: .stdout, "D stored") { count("photoSuccess", in: $0) >= 1 }
        again.signal(SIGTERM)
        let second = await again.wait(timeout: .seconds(60))
        #expect(second.status == 0, "\(second.stderr.suffix(1500))")
        #expect(second.stderr.contains("its folder '\(shared)/.shutterpipe' is a symbolic link (never followed)"), "\(second.stderr.suffix(2000))")

        let linkedInto = try FileManager.default.contentsOfDirectory(atPath: keys)
        #expect(linkedInto.isEmpty, "written through a link: \(linkedInto)")
        let everything = FileManager.default.enumerator(atPath: mirror)?.allObjects.compactMap { $0 as? String } ?? []
        #expect(!everything.contains { FileManager.default.contents(atPath: "\(mirror)/\($0)")?.range(of: Data(secret.utf8)) != nil }, "the mirror holds the secret")
        #expect(!server.files().values.contains { $0.range(of: Data(secret.utf8)) != nil }, "the remote holds the secret")
        #expect(!(first.stderr + second.stderr).contains(secret))
    }
}

@Suite("fault: a capture folder others may write", .timeLimit(.minutes(5)))
struct CaptureFolderAttackTests {
    @Test("by the session's own user: a label's folder, a waiting photo, a folder about to be marked and the catalogue's folder swapped for links; nothing is written or read through them, each refusal named")
    func sessionUser() async throws { try await CaptureFolderAttack.shoot(as: nil) }
}

@Suite("fault: a capture folder others may write, by a second user", .timeLimit(.minutes(5)),
       .requiresRoot("the attacker is a second user (useradd, setpriv)"))
struct CaptureFolderAttackAsAnotherUserTests {
    @Test("by a second user who writes the shared capture folder (0777): the same swaps, the same refusals")
    func secondUser() async throws { try await CaptureFolderAttack.shoot(as: try await OtherUser.make()) }
}
