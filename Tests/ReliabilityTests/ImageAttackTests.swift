#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeFixtures
import TestSupport
import Testing

/// A review-screen session whose photos arrive through a hot folder, so that a test can
/// hand it any file: a web trigger on a free port, a files sink, the catalogue.
struct DroppedPhotosSession {
    let folder: TemporaryDirectory
    let process: RunningProcess
    let port: UInt16
    var incoming: String { folder.file("in") }

    static func start(_ folder: TemporaryDirectory, web: String = "") async throws -> DroppedPhotosSession {
        try FileManager.default.createDirectory(atPath: folder.file("in"), withIntermediateDirectories: true)
        let config = try writeConfig("""
        version: 1
        session: dropped
        backend: {type: hotfolder, folder: \(folder.file("in")), settle: 1s}
        triggers:
          - type: stdin
          - {type: web, listen: "127.0.0.1:0"\(web)}
        sinks: [{type: files, directory: \(folder.file("out")), filename: "{name}.{ext}"}]
        coordinator: {enterAtStart: true}
        """, in: folder)
        let process = try await RunningProcess.start(["run", "--config", config, "--verbose", "--no-status"], in: folder.path)
        let portOf: @Sendable () -> UInt16? = {
            let log = process.stderrSoFar
            guard let range = log.range(of: "web page at http://127.0.0.1:") else { return nil }
            return UInt16(log[range.upperBound...].prefix { $0.isNumber })
        }
        guard await eventually({ portOf() != nil || !process.isRunning }), let port = portOf() else {
            throw TestSupportError("the web trigger did not start: \(process.stderrSoFar)")
        }
        await process.waitForOutput("watching '\(folder.file("in"))'")
        return DroppedPhotosSession(folder: folder, process: process, port: port)
    }

    /// Puts `data` into the hot folder as `name` (renamed in whole, as an uploader does).
    func drop(_ name: String, _ data: Data) throws {
        let part = "\(incoming)/\(name).part"
        try data.writeTestFile(part)
        guard rename(part, "\(incoming)/\(name)") == 0 else { throw TestSupportError("rename: \(String(cString: strerror(errno)))") }
    }

    /// The catalogue's shot id of each stored camera file name.
    func ids() async throws -> [String: Int] {
        let reply = try await http("GET", "/api/shots?limit=100", port: port)
        var found: [String: Int] = [:]
        for shot in (reply.json?["shots"] as? [[String: Any]]) ?? [] {
            for file in (shot["files"] as? [[String: Any]]) ?? [] {
                if let name = file["name"] as? String, let id = shot["id"] as? Int { found[name] = id }
            }
        }
        return found
    }
}

/// Case 17: the adversarial pass of issue 41 against the images and requests of the review
/// screen; each failed on the code before its fix (the session died, or ran out of memory).
@Suite("fault: hostile photos and requests on the review screen", .serialized, .timeLimit(.minutes(5)))
struct ImageAttackTests {
    @Test("a 300-byte JPEG declaring 65500×65500, an embedded preview declaring as much, a 196 MP TIFF of a few hundred KB, a tile at column 2^54: each refused with the reason before any decode; the session lives on, and its memory stays small")
    func bombs() async throws {
        let folder = TemporaryDirectory("chaos-bombs")
        let session = try await DroppedPhotosSession.start(folder)
        let bomb = Self.declaring(width: 65500, height: 65500, SyntheticJPEG.make(width: 16, height: 16, shot: 1))
        #expect(bomb.count < 1000)
        try session.drop("bomb.jpg", bomb)
        let tiff = folder.file("scan.tif")
        let made = try await runProgram(["/usr/bin/python3", "-c", Self.deflatedTIFF, tiff, "14000", "14000"], timeout: .seconds(120))
        try #require(made.status == 0, "\(made.errors)")
        #expect((try FileManager.default.attributesOfItem(atPath: tiff)[.size] as? Int).map { $0 < 2_000_000 } == true)
        try session.drop("scan.tif", try Data(contentsOf: URL(fileURLWithPath: tiff)))
        try session.drop("fine.jpg", SyntheticJPEG.make(width: 1200, height: 800, shot: 2))
        // A real photo whose embedded preview (MPF) declares 65500×65500: it is no source.
        let lying = MultiPictureJPEG.make(primary: SyntheticJPEG.make(width: 3200, height: 2400, shot: 3),
                                          secondary: Self.declaring(width: 65500, height: 65500, SyntheticJPEG.make(width: 16, height: 16, shot: 4)))
        try session.drop("lying.jpg", lying)
        await session.process.waitForOutput("four shots recorded") { shotsRecorded(in: $0) >= 4 }
        let ids = try await session.ids()
        let (bombID, tiffID, fineID) = (try #require(ids["bomb.jpg"]), try #require(ids["scan.tif"]), try #require(ids["fine.jpg"]))
        let lyingPreview = try await http("GET", "/api/shots/\(try #require(ids["lying.jpg"]))/preview.jpg", port: session.port)
        #expect(lyingPreview.status == 200 && Self.size(of: lyingPreview.body) == [1600, 1200], "a preview from the photo itself: \(lyingPreview.status) \(Self.size(of: lyingPreview.body))")

        for route in ["preview.jpg", "thumbnail.jpg", "image.json", "tiles/0-0.png", "histogram.json"] {
            let reply = try await http("GET", "/api/shots/\(bombID)/\(route)", port: session.port)
            #expect(reply.status == 500, "\(route): \(reply.status)")
            #expect(String(decoding: reply.body, as: UTF8.self).contains("declares 65500×65500 pixels (4290.2 MP), over the limit of 200.0 MP"), "\(route): \(String(decoding: reply.body, as: UTF8.self))")
        }
        for route in ["preview.jpg", "full.jpg", "image.json"] {
            let reply = try await http("GET", "/api/shots/\(tiffID)/\(route)", port: session.port)
            #expect(reply.status == 500 && String(decoding: reply.body, as: UTF8.self).contains("over the limit of 1024 MiB"), "\(route): \(String(decoding: reply.body, as: UTF8.self))")
        }
        for tile in ["18014398509481984-0", "0-18014398509481984", "9223372036854775807-9223372036854775807", "-1-0", "3-0", "0-2", "1-0-0"] {
            let reply = try await http("GET", "/api/shots/\(fineID)/tiles/\(tile).png", port: session.port)
            #expect(reply.status == 404, "tile \(tile): \(reply.status)")
        }
        #expect(try await http("GET", "/api/shots/\(fineID)/tiles/2-1.png", port: session.port).status == 200)
        #expect(session.process.isRunning)
        let peak = HotFolderAttacks.peakMemory(session.process.pid)
        #expect(peak.map { $0 < 300_000_000 } == true, "peak memory \(peak.map(HotFolderAttacks.formatBytes) ?? "?")")
        session.process.signal(SIGTERM)
        let outcome = await session.process.wait(timeout: .seconds(60))
        #expect(outcome.status == 0)
        // Said in the log, once per photo and route, however often it is asked for.
        #expect(count("web: shot \(bombID)'s preview.jpg refused: the photo declares 65500×65500", in: outcome.stderr) == 1, "\(outcome.stderr.suffix(3000))")
        #expect(outcome.stderr.contains("web: shot \(tiffID)'s image.json refused: 'scan.tif' (14000×14000) needs about"), "\(outcome.stderr.suffix(3000))")
    }

    @Test("a stored photo replaced in the capture folder by a sparse file of 2 GB (it costs its writer nothing): full size and 100 % are refused with the reason, never read; the session's memory stays small")
    func sparsePhoto() async throws {
        let folder = TemporaryDirectory("chaos-sparse-photo")
        let session = try await DroppedPhotosSession.start(folder)
        try session.drop("fine.jpg", SyntheticJPEG.make(width: 1200, height: 800, shot: 2))
        await session.process.waitForOutput("the shot recorded") { shotsRecorded(in: $0) >= 1 }
        let id = try #require(try await session.ids()["fine.jpg"])
        let stored = folder.file("out/fine.jpg")
        #expect(unlink(stored) == 0)
        let sparse = open(stored, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        #expect(sparse >= 0 && ftruncate(sparse, 2_000_000_000) == 0 && write(sparse, [0xFF, 0xD8, 0xFF, 0xE0], 4) == 4)
        close(sparse)
        for route in ["full.jpg", "image.json", "tiles/0-0.png"] {
            let reply = try await http("GET", "/api/shots/\(id)/\(route)", port: session.port, timeout: .seconds(60))
            #expect(reply.status == 500 && String(decoding: reply.body, as: UTF8.self).contains("is sparse (2.0 GB, of which"), "\(route): \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
        }
        #expect(session.process.isRunning)
        let peak = HotFolderAttacks.peakMemory(session.process.pid)
        #expect(peak.map { $0 < 300_000_000 } == true, "peak memory \(peak.map(HotFolderAttacks.formatBytes) ?? "?")")
        session.process.signal(SIGTERM)
        #expect(await session.process.wait(timeout: .seconds(60)).status == 0)
    }

    @Test("six requests for six 30 MP photos at 100 % at once: decoded one at a time, the cache's limit kept before each decode (peak memory under the limit and one decode); every request answered")
    func concurrentFullDecodes() async throws {
        let folder = TemporaryDirectory("chaos-full-decodes")
        let session = try await DroppedPhotosSession.start(folder, web: ", fullImageCacheMB: 256")
        let source = folder.file("big.jpg")
        let made = try await runProgram(["/usr/bin/python3", "-c", """
        import sys
        from PIL import Image
        image = Image.linear_gradient("L").resize((6000, 5000)).convert("RGB")
        image.save(sys.argv[1], quality=60)
        """, source], timeout: .seconds(120))
        try #require(made.status == 0, "\(made.errors)")
        let jpeg = try Data(contentsOf: URL(fileURLWithPath: source))
        for index in 1...6 { try session.drop("big-\(index).jpg", jpeg) }
        await session.process.waitForOutput("six shots recorded") { shotsRecorded(in: $0) >= 6 }
        let ids = try await session.ids()
        let before = HotFolderAttacks.peakMemory(session.process.pid) ?? 0
        let replies = try await withThrowingTaskGroup(of: HTTPReply.self) { group in
            for index in 1...6 {
                let id = try #require(ids["big-\(index).jpg"])
                group.addTask { try await http("GET", "/api/shots/\(id)/image.json", port: session.port, timeout: .seconds(120)) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(replies.allSatisfy { $0.status == 200 && $0.json?["width"] as? Int == 6000 }, "\(replies.map { String(decoding: $0.body, as: UTF8.self) })")
        let peak = HotFolderAttacks.peakMemory(session.process.pid) ?? .max
        // One 30 MP image is 90 MB decoded; six at once were 540 MB beside what was kept.
        #expect(peak < max(before, 60_000_000) + 256_000_000, "peak memory \(HotFolderAttacks.formatBytes(peak)), \(HotFolderAttacks.formatBytes(before)) before")
        session.process.signal(SIGTERM)
        #expect(await session.process.wait(timeout: .seconds(60)).status == 0)
    }

    @Test("a POST that is not JSON (text/plain, a form) gets 403 without an Origin too, and fires nothing; the page's own POSTs (JSON, or no body) work")
    func notJSON() async throws {
        let folder = TemporaryDirectory("chaos-not-json")
        let web = try await WebSession.start(folder)
        for type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"] {
            let capture = try await http("POST", "/api/capture", port: web.port, headers: ["Content-Type": type], body: Data("x".utf8))
            #expect(capture.status == 403, "\(type): \(capture.status)")
            let label = try await http("POST", "/api/label", port: web.port, headers: ["Content-Type": type], body: Data(#"{"label":"FORGED"}"#.utf8))
            #expect(label.status == 403 && String(decoding: label.body, as: UTF8.self).contains("must be JSON"), "\(type): \(label.status)")
        }
        let untyped = try await http("POST", "/api/label", port: web.port, headers: ["Content-Type": ""], body: Data(#"{"label":"FORGED"}"#.utf8))
        #expect(untyped.status == 403)
        #expect(folder.names("out").filter { $0.hasSuffix(".jpg") }.isEmpty, "a refused POST fired the camera")
        #expect(try await http("POST", "/api/label", port: web.port, body: Data(#"{"label":"OK-1"}"#.utf8)).status == 200)
        #expect(try await http("POST", "/api/capture", port: web.port).status == 200)
        let outcome = await web.stop()
        #expect(!outcome.stderr.contains("FORGED"))
        #expect(folder.names("out").filter { $0.hasSuffix(".jpg") }.count == 1)
    }

    /// A JPEG's width and height, from its frame header.
    static func size(of jpeg: Data) -> [Int] {
        let bytes = [UInt8](jpeg)
        for index in 0..<max(0, bytes.count - 9) where bytes[index] == 0xFF && (bytes[index + 1] == 0xC0 || bytes[index + 1] == 0xC2) {
            return [Int(bytes[index + 7]) << 8 | Int(bytes[index + 8]), Int(bytes[index + 5]) << 8 | Int(bytes[index + 6])]
        }
        return []
    }

    /// `jpeg` with its frame header's size replaced: a claim its few bytes cannot back.
    static func declaring(width: Int, height: Int, _ jpeg: Data) -> Data {
        var bytes = [UInt8](jpeg)
        for index in 0..<(bytes.count - 9) where bytes[index] == 0xFF && (bytes[index + 1] == 0xC0 || bytes[index + 1] == 0xC2) {
            bytes[index + 5] = UInt8(height >> 8); bytes[index + 6] = UInt8(height & 0xFF)
            bytes[index + 7] = UInt8(width >> 8); bytes[index + 8] = UInt8(width & 0xFF)
            break
        }
        return Data(bytes)
    }

    /// A TIFF of WIDTH×HEIGHT RGB pixels, all black, in one Deflate strip: a few hundred KB
    /// that decode to gigabytes. Written by hand (no image of that size is ever made).
    static let deflatedTIFF = """
    import struct, sys, zlib
    path, width, height = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    packer = zlib.compressobj(9)
    row = bytes(width * 3)
    chunks = [packer.compress(row) for _ in range(height)] + [packer.flush()]
    strip = b"".join(chunks)
    entries = [(256, 4, 1, width), (257, 4, 1, height), (258, 3, 1, 8), (259, 3, 1, 8), (262, 3, 1, 2),
               (273, 4, 1, 8), (277, 3, 1, 3), (278, 4, 1, height), (279, 4, 1, len(strip)), (284, 3, 1, 1)]
    ifd = 8 + len(strip)
    with open(path, "wb") as out:
        out.write(b"II*\\0" + struct.pack("<I", ifd) + strip)
        out.write(struct.pack("<H", len(entries)))
        for tag, kind, count, value in entries:
            out.write(struct.pack("<HHI", tag, kind, count) + (struct.pack("<HH", value, 0) if kind == 3 else struct.pack("<I", value)))
        out.write(struct.pack("<I", 0))
    """
}
