#if canImport(Glibc)
import Glibc
#endif
@testable import FilesSink
import Foundation
import ShutterPipeKit
import TestSupport
import Testing

/// Every file below `folder`, relative to it, with its bytes (the mirror's bookkeeping left out).
func filesBelow(_ folder: String) -> [String: Data] {
    var found: [String: Data] = [:]
    guard let walker = FileManager.default.enumerator(atPath: folder) else { return found }
    for case let relative as String in walker {
        let path = "\(folder)/\(relative)"
        var isDirectory: ObjCBool = false
        guard !relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }),
              FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
        found[relative] = FileManager.default.contents(atPath: path)
    }
    return found
}

@Suite("files sink: mirror folders", .timeLimit(.minutes(3)))
struct MirrorTests {
    @Test("two mirrors get every stored file, sidecars included, in the capture folder's layout and byte for byte, by the end of the session")
    func copies() async throws {
        let folder = TemporaryDirectory("mirror")
        let (out, first, second) = (folder.file("out"), folder.file("usb"), folder.file("nas/photos"))
        try FileManager.default.createDirectory(atPath: first, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: second, withIntermediateDirectories: true)
        let options = try FilesSink.Options(PluginOptions(configNode(["directory": out, "filename": "{camera}/{seq:03}.{ext}", "mirror": [first, second],
                                                                      "sidecars": "always", "exif": ["Artist": "Jane Doe"]]), owner: "sink 'files'"))
        let sink = FilesSink(options: options)
        try await sink.begin()
        for number in 1...10 {
            let jpeg = try await cameraJPEG(in: folder, name: "shot\(number).jpg")
            _ = try await sink.store(CapturedPhoto(files: [CapturedFile(name: "DSC_\(number).NEF", data: Data("raw \(number)".utf8)),
                                                       CapturedFile(name: "DSC_\(number).JPG", data: jpeg)], camera: "D750"),
                                     context: shot(number, camera: number % 2 == 0 ? "left" : "right"))
        }
        await sink.end()
        let stored = filesBelow(out)
        #expect(stored.count == 40 && stored.keys.contains("left/002.jpg") && stored.keys.contains("right/001.nef.xmp"), "\(stored.keys.sorted())")
        #expect(filesBelow(first) == stored && filesBelow(second) == stored)
    }

    @Test("a mirror that is not there: shots are answered all the same, the log says so once; a session killed with -9 and started again with the mirror back copies every one, once")
    func absentMirrorAcrossAKill() async throws {
        let folder = TemporaryDirectory("mirror-kill")
        let (out, mirror) = (folder.file("out"), folder.file("backup"))
        let config = try writeConfig("""
        version: 1
        session: m
        backend: {type: file-stub, width: 320, height: 240}
        triggers: [{type: stdin}]
        sinks: [{type: files, directory: \(out), mirror: [\(mirror)]}]
        """, in: folder)
        var session = try await RunningProcess.start(["run", "--config", config, "--no-status"], in: folder.path)
        for number in 1...5 {
            session.send("capture\n")
            await session.waitForOutput(on: .stdout, "answer \(number)") { $0.split(separator: "\n").filter { $0.hasPrefix("photoSuccess") }.count >= number }
        }
        await session.waitForOutput("is not there")
        #expect(count("is not there", in: session.stderrSoFar) == 1, "said once per outage")
        session.signal(SIGKILL)
        _ = await session.wait(timeout: .seconds(30))

        // Back: the next session goes on with the queue left in the capture folder.
        try FileManager.default.createDirectory(atPath: mirror, withIntermediateDirectories: true)
        session = try await RunningProcess.start(["run", "--config", config, "--no-status"], in: folder.path)
        await session.waitForOutput("left queued by an earlier run")
        let expected = filesBelow(out)
        #expect(expected.count == 5)
        #expect(await eventually(timeout: .seconds(60)) { filesBelow(mirror) == expected }, "\(filesBelow(mirror).keys.sorted())")
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(60))
        #expect(outcome.status == 0 && !outcome.stderr.contains("still queued"), "\(outcome.stderr)")
        // Once: nothing copied twice (no second name for any photo).
        #expect(filesBelow(mirror).count == 5)
        // The catalogue records each copy, with where it went.
        let listed = try await shutterpipe(["shots", "--config", config, "--json"], in: folder.path)
        let files = (try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]] ?? []).flatMap { $0["files"] as? [[String: Any]] ?? [] }
        #expect(files.count == 5 && files.allSatisfy { file in
            let copies = file["copies"] as? [[String: Any]] ?? []
            return copies.count == 1 && copies[0]["destination"] as? String == mirror
                && (copies[0]["location"] as? String)?.hasPrefix(mirror + "/") == true
        }, "\(listed.stdout) \(listed.stderr) \(outcome.stderr)")
    }
}

extension MirrorTests {
    @Test("a mirror on a disk that fills up (a 1 MB tmpfs) keeps the copies that do not fit queued, and makes them once it has room; every shot stored meanwhile (needs root: it mounts a tmpfs)",
          .enabled(if: geteuid() == 0, "needs root: it mounts a tmpfs"))
    func fullMirror() async throws {
        let folder = TemporaryDirectory("mirror-full")
        let (out, mirror) = (folder.file("out"), folder.file("small"))
        try FileManager.default.createDirectory(atPath: mirror, withIntermediateDirectories: true)
        #expect(try await runProgram(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mirror]).status == 0)
        defer { _ = umount2(mirror, 2) }  // MNT_DETACH
        let sink = FilesSink(options: try FilesSink.Options(PluginOptions(configNode(["directory": out, "filename": "{seq}.{ext}", "mirror": [mirror]]),
                                                                          owner: "sink 'files'")))
        try await sink.begin()
        for number in 1...4 {  // 400 KB each: two fit on the mirror
            let bytes = Data((0..<400_000).map { _ in UInt8.random(in: 0...255) })
            let receipt = try await sink.store(CapturedPhoto(files: [CapturedFile(name: "IMG_\(number).JPG", data: bytes)], camera: "D750"), context: shot(number))
            #expect(receipt.files.count == 1, "shot \(number) stored")
        }
        let queue = try #require(sink.mirrors)
        #expect(await eventually(timeout: .seconds(60)) { filesBelow(mirror).count == 2 && queue.queued == 2 }, "\(filesBelow(mirror).keys.sorted()), \(queue.queued) queued")
        #expect(try await runProgram(["mount", "-o", "remount,size=8m", mirror]).status == 0)
        #expect(await eventually(timeout: .seconds(60)) { queue.queued == 0 })
        await sink.end()
        #expect(filesBelow(mirror) == filesBelow(out) && filesBelow(out).count == 4)
    }
}

