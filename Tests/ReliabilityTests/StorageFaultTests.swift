#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

/// Case 2: the output disk fills up, turns read-only, and loses its folder mid-session.
@Suite("fault: storage", .serialized, .requiresRoot("it mounts a small tmpfs, fills it and remounts it read-only"))
struct StorageFaultTests {
    /// A small tmpfs mounted for one test (CI runs as root; mounting needs it).
    final class SmallDisk {
        let path: String
        init(at path: String, megabytes: Int) async throws {
            self.path = path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            let mounted = try await runProgram(["mount", "-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0755", "tmpfs", path])
            guard mounted.status == 0 else {
                throw TestSupportError("cannot mount a tmpfs at \(path) (status \(mounted.status)): the storage fault cases mount one and need root, as CI has")
            }
        }
        func remount(_ mode: String) async throws {
            let result = try await runProgram(["mount", "-o", "remount,\(mode)", path])
            guard result.status == 0 else { throw TestSupportError("cannot remount \(path) \(mode)") }
        }
        var freeBytes: Int64 {
            var stats = statvfs()
            return statvfs(path, &stats) == 0 ? Int64(stats.f_bavail) * Int64(stats.f_frsize) : 0
        }
        func unmount() async { _ = try? await runProgram(["umount", "-l", path]) }
        deinit { umount2(path, Int32(MNT_DETACH)) }  // also when the test fails half-way
    }

    @Test("disk full, read-only, folder removed: photoFailed with the storage cause and a clear message, no partial file, the photo kept on the camera, and the next capture succeeds once fixed")
    func storageFaults() async throws {
        let folder = TemporaryDirectory("chaos-disk")
        try writeLargeJPEGs(1, megabytes: 3, into: folder.file("card"))
        let camera = try await FakeCamera(["--images", folder.file("card")])
        let disk = try await SmallDisk(at: folder.file("disk"), megabytes: 16)
        let output = "\(disk.path)/shoot", socket = folder.file("s.sock")
        // The catalogue off the small disk: it is remounted read-only, which an open database
        // would refuse (the catalogue's own unwritable case is in CatalogueTests).
        let config = try socketConfig(backend: "  type: gphoto2\n  port: \(camera.portSpec)", socket: socket, output: output,
                                      extra: "catalogue:\n  path: \(folder.file("catalogue.sqlite"))", in: folder)
        let session = try await SocketSession.start(config, socket: socket, in: folder, environment: ["HOME": camera.home.path])
        let client = try await SocketLines(path: socket)
        var id = 0
        func capture() async -> [String: Any] {
            id += 1
            await client.send("{\"event\":\"capture\",\"id\":\(id)}\n")
            return await client.replies(id).last ?? [:]
        }
        func finalNames() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: output)) ?? []).filter { !$0.hasPrefix(".") }.sorted() }
        func temporaryNames() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: output)) ?? []).filter { $0.hasPrefix(".shutterpipe-tmp-") } }

        #expect(await capture()["state"] as? String == "photoSuccess")

        // Disk full: leave less than one photo free.
        let filler = "\(disk.path)/filler"
        try Data(count: Int(disk.freeBytes) - 1_000_000).writeTestFile(filler)
        let full = await capture()
        #expect(full["state"] as? String == "photoFailed")
        #expect(full["cause"] as? String == "storageUnavailable")
        #expect((full["message"] as? String)?.contains("disk full") == true, "\(full)")
        #expect((full["message"] as? String)?.contains(output) == true, "the message names the folder: \(full)")
        #expect(finalNames().count == 1 && temporaryNames().isEmpty, "no partial file: \(finalNames()) \(temporaryNames())")
        unlink(filler)
        let freed = await capture()
        #expect(freed["state"] as? String == "photoSuccess", "after space is freed, the next capture succeeds: \(freed)\n\(session.process.stderrSoFar.suffix(3000))")

        // Read-only mid-session.
        try await disk.remount("ro")
        let readOnly = await capture()
        #expect(readOnly["cause"] as? String == "storageUnavailable")
        #expect((readOnly["message"] as? String)?.contains("read-only") == true, "\(readOnly)")
        try await disk.remount("rw")
        let writable = await capture()
        #expect(writable["state"] as? String == "photoSuccess", "\(writable)")
        #expect(finalNames().count == 3 && temporaryNames().isEmpty)

        // The folder removed mid-session: made again, and numbering goes on.
        let highest = finalNames().compactMap { Int($0.dropFirst(5).prefix(5)) }.max() ?? 0
        try FileManager.default.removeItem(atPath: output)
        let recreated = await capture()
        #expect(recreated["state"] as? String == "photoSuccess", "\(recreated)")
        let after = finalNames()
        #expect(after.count == 1 && (after.first.flatMap { Int($0.dropFirst(5).prefix(5)) } ?? 0) > highest, "\(after) after \(highest)")

        // The whole disk gone (unmounted under the session): a failure that says so, then back.
        await disk.unmount()
        try? FileManager.default.removeItem(atPath: disk.path)
        try "not a folder".writeTestFile(disk.path)
        let gone = await capture()
        #expect(gone["cause"] as? String == "storageUnavailable", "\(gone)")
        unlink(disk.path)
        #expect(await capture()["state"] as? String == "photoSuccess")

        #expect(await session.stop().status == 4)  // some events failed, by design: exit 4
        // The three shots that could not be stored are still on the camera.
        #expect(try await camera.filesOnCard().count == 3)
        Chaos.record("storage faults", ["diskFull": full["message"] as? String ?? "", "readOnly": readOnly["message"] as? String ?? "",
                                        "folderRemoved": "recreated, numbering continued", "msDiskFull": replyMilliseconds(full)])
    }
}
