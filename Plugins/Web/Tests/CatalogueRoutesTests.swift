#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeFixtures
import ShutterPipeImaging
import ShutterPipeKit
import TestSupport
import Testing
@testable import WebTrigger

/// How many shots `/api/shots` lists now; `nil` when it does not answer.
func shotsListed(_ port: UInt16) async -> Int? {
    ((try? await http("GET", "/api/shots", port: port))?.json?["shots"] as? [[String: Any]])?.count
}

@Suite("web: every shot of the catalogue, previews kept on disk", .timeLimit(.minutes(5)))
struct CatalogueRoutesTests {
    @Test("/api/shots serves every shot of the catalogue by id, beyond the page's recent ones and across a restart; previews made once, found on disk after the restart")
    func shotsAcrossRestart() async throws {
        let folder = TemporaryDirectory("web-catalogue")
        let cache = folder.file("out/.shutterpipe/.cache/web/previews")
        var firstPreview = Data()
        for run in 1...2 {
            let (session, port) = try await webSession(folder, web: ", recent: 2", width: 1200, height: 800, verbose: true)
            session.send("capture\n")
            #expect(await eventually(timeout: .seconds(60)) { session.stdoutSoFar.split(separator: "\n").count >= 1 })
            // The record follows the answer on the catalogue's thread.
            // The record follows the answer on the catalogue's thread; its log line is the gate.
            await session.waitForOutput("the shot recorded") { shotsRecorded(in: $0) >= 1 }
            #expect(await shotsListed(port) == (run == 1 ? 1 : 4), "run \(run): \(session.stderrSoFar)")
            if run == 1 {
                for shot in 2...3 {
                    session.send("capture\n")
                    #expect(await eventually(timeout: .seconds(60)) { session.stdoutSoFar.split(separator: "\n").count >= shot })
                }
                await session.waitForOutput("3 shots recorded") { shotsRecorded(in: $0) >= 3 }
                #expect(await shotsListed(port) == 3)
            }
            let shots = try #require(try await http("GET", "/api/shots", port: port).json?["shots"] as? [[String: Any]])
            let ids = shots.compactMap { $0["id"] as? Int }
            #expect(ids == ids.sorted(by: >) && Set(ids).count == shots.count, "newest first, one id each: \(ids)")
            #expect(shots.allSatisfy { ($0["files"] as? [[String: Any]])?.first?["name"] as? String != nil && ($0["shotID"] as? String)?.contains("#") == true })
            #expect(shots.allSatisfy { !"\($0)".contains(folder.path) }, "no folder is shown: \(shots)")
            let photos = try #require(try await http("GET", "/api/photos", port: port).json?["photos"] as? [[String: Any]])
            #expect(photos.count <= 2, "the page keeps its recent ones only")
            // Shot 1, of the first run, beyond the page's recent ones (and, in run 2, before this start).
            let preview = try await http("GET", "/api/shots/1/preview.jpg", port: port)
            #expect(preview.status == 200 && preview.body.starts(with: [0xFF, 0xD8]), "\(preview.status) \(String(decoding: preview.body.prefix(200), as: UTF8.self))")
            let one = try #require(try await http("GET", "/api/shots/1", port: port).json)
            #expect(one["id"] as? Int == 1 && one["preview"] as? String == "/api/shots/1/preview.jpg" && one["rating"] as? Int == 0)
            #expect(try await http("GET", "/api/shots/999", port: port).status == 404)
            #expect(try await http("GET", "/api/shots/x/preview.jpg", port: port).status == 404)
            if run == 1 {
                firstPreview = preview.body
                #expect(((try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? []).contains { $0.hasSuffix(".jpg") }, "previews are kept on disk")
            } else {
                #expect(preview.body == firstPreview, "the same preview, from disk")
            }
            session.signal(SIGTERM)  // the web trigger serves until the session is stopped
            let outcome = await session.wait()
            #expect(outcome.status == 0, "\(outcome.stderr)")
            if run == 2 {
                #expect(outcome.stderr.contains("read from the disk cache") && !outcome.stderr.contains("web-0001.jpg' made in"),
                        "made once, read after the restart: \(outcome.stderr)")
            }
        }
    }

    @Test("100 %: full.jpg of a RAW+JPEG shot is its JPEG as stored; ?from=raw develops the RAW's whole sensor, matching dcraw_emu's full demosaic; never an upscaled preview")
    func fullSize() async throws {
        let folder = TemporaryDirectory("web-full-size")
        let card = folder.file("card")
        try FileManager.default.createDirectory(atPath: card, withIntermediateDirectories: true)
        try await makeDNG("\(card)/IMG_0003.DNG", width: 800, height: 600, in: folder)
        let jpeg = try await offThePool { SyntheticJPEG.make(width: 800, height: 600, shot: 3) }
        try jpeg.writeTestFile("\(card)/IMG_0003.JPG")
        let (session, port) = try await webSession(folder, web: ", previewSize: 200", card: card, verbose: true)
        session.send("capture\n")
        await session.waitForOutput("the shot recorded") { shotsRecorded(in: $0) >= 1 }
        #expect(await shotsListed(port) == 1, "\(session.stderrSoFar)")
        let shot = try #require(try await http("GET", "/api/shots/1", port: port).json)
        #expect(shot["full"] as? String == "/api/shots/1/full.jpg" && (shot["files"] as? [Any])?.count == 2, "\(shot)")
        let storedName = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.file("out")).first { $0.hasSuffix(".jpg") })
        let stored = try #require(FileManager.default.contents(atPath: folder.file("out/\(storedName)")))
        let full = try await http("GET", "/api/shots/1/full.jpg", port: port)
        #expect(full.status == 200 && full.body == stored, "the JPEG as stored")
        let preview = try await http("GET", "/api/shots/1/preview.jpg", port: port)
        #expect(dimensions(preview.body) == [200, 150], "the preview stays small")
        let raw = try await http("GET", "/api/shots/1/full.jpg?from=raw", port: port)
        try #require(raw.status == 200, "\(String(decoding: raw.body.prefix(300), as: UTF8.self))")
        let body = raw.body
        let ours = try await offThePool { try JPEGDecoder.decodeScaled(body, longEdge: 10_000).image }
        #expect(ours.width == 800 && ours.height == 600, "the whole sensor")
        // dcraw_emu: full size, the camera's white balance (-w), 8 bits, to a PPM beside a
        // copy of the card's file (it writes beside its input).
        let copy = folder.file("IMG_0003.DNG")
        try copyTestFile("\(card)/IMG_0003.DNG", to: copy)
        let developed = try await runProgram(["dcraw_emu", "-w", copy])
        try #require(developed.status == 0, "dcraw_emu: \(developed.errors)")
        let reference = try readPPM(copy + ".ppm")
        let difference = meanDifference(ours, reference)
        #expect(difference < 4, "mean difference \(difference) per value against dcraw_emu's full demosaic")
        session.signal(SIGTERM)
        #expect(await session.wait().status == 0)
    }

    @Test("the disk cache stays within its bound, dropping the previews used longest ago; a preview just read stays")
    func boundedCache() throws {
        let folder = TemporaryDirectory("web-preview-cache")
        let cache = PreviewDiskCache(folder: folder.file("previews"), limit: 100_000, log: .discarding)
        let preview = Data(repeating: 0xAB, count: 30_000)
        for index in 0..<3 { cache.write(preview, key: "photo-\(index)", longEdge: 1600) }
        #expect(cache.read("photo-0", longEdge: 1600) == preview)
        // The order of use, whatever the file system clock's grain: 1, then 2, then the
        // writes to come, then 0 (read, as if again, after them).
        for (index, age) in [(1, 120), (2, 60), (0, -60)] {
            var times = [timeval(tv_sec: time(nil) - age, tv_usec: 0), timeval(tv_sec: time(nil) - age, tv_usec: 0)]
            #expect(utimes(cache.file(for: "photo-\(index)", longEdge: 1600), &times) == 0)
        }
        for index in 3..<6 { cache.write(preview, key: "photo-\(index)", longEdge: 1600) }
        let kept = try FileManager.default.contentsOfDirectory(atPath: folder.file("previews")).filter { $0.hasSuffix(".jpg") }
        let bytes = kept.reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: folder.file("previews/\($1)"))[.size] as? Int) ?? 0) }
        #expect(bytes <= 100_000, "\(kept.count) previews, \(bytes) bytes")
        #expect(cache.read("photo-0", longEdge: 1600) == preview, "the one read recently stays")
        #expect(cache.read("photo-5", longEdge: 1600) == preview, "the newest stays")
        #expect(cache.read("photo-1", longEdge: 1600) == nil, "the one used longest ago went")
        #expect(cache.read("photo-0", longEdge: 800) == nil, "another size is another preview")
    }
}
