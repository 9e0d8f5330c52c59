#if canImport(Glibc)
import Glibc
#endif
@testable import ShutterPipeCatalogue
import Foundation
import ShutterPipeKit
import TestSupport
import Testing

/// A file-stub session with a stdin trigger and a files sink into `photos`.
func cataloguePipeline(_ photos: String, backend: String = "", sink: String = "", top: String = "") -> String {
    """
    version: 1
    session: studio
    \(top)
    backend:
      type: file-stub
      camera: Test Body
    \(backend)
    triggers:
      - type: stdin
    sinks:
      - type: files
        directory: \(photos)
        filename: "{session}-{seq:04}.{ext}"
    \(sink)
    """
}

/// `shutterpipe shots ARGS --json`, decoded.
func listedShots(_ arguments: [String], in folder: TemporaryDirectory, sourceLocation: Testing.SourceLocation = #_sourceLocation) async throws -> [CatalogueShot] {
    let outcome = try await shutterpipe(["shots", "--json"] + arguments, in: folder.path, sourceLocation: sourceLocation)
    guard outcome.status == 0 else {
        Issue.record("shots \(arguments) exited \(outcome.status): \(outcome.stderr)", sourceLocation: sourceLocation)
        return []
    }
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    return try decoder.decode([CatalogueShot].self, from: Data(outcome.stdout.utf8))
}

/// The photo files under `folder`, hidden ones left out.
func photosOnDisk(_ folder: String) -> Set<String> {
    let root = URL(fileURLWithPath: folder).standardizedFileURL.path
    let names = (FileManager.default.enumerator(atPath: root)?.allObjects as? [String]) ?? []
    return Set(names.filter { name in !name.split(separator: "/").contains { $0.hasPrefix(".") } && FileKind.of(name) != nil }.map { "\(root)/\($0)" })
}

/// exiftool's tags without their group ("XMP-xmp:Rating" → "Rating"), the first of each name.
func ungrouped(_ tags: [String: String]) -> [String: String] {
    var plain: [String: String] = [:]
    for (key, value) in tags.sorted(by: { $0.key < $1.key }) {
        let name = key.split(separator: ":").last.map(String.init) ?? key
        if plain[name] == nil { plain[name] = value }
    }
    return plain
}

/// `sha256sum`, the independent digest.
func sha256sum(_ path: String) async throws -> String {
    String(try await runProgram(["/usr/bin/sha256sum", path]).text.prefix(64))
}

@Suite("catalogue: every shot, across restarts", .timeLimit(.minutes(3)))
struct CatalogueTests {
    @Test("shots of two sessions, fed one line at a time: one id each, kept across the restart; trigger, camera, times, state and every file with its SHA-256")
    func twoSessions() async throws {
        let folder = TemporaryDirectory("catalogue-sessions")
        let config = try writeConfig(cataloguePipeline(folder.file("photos"), backend: "  failEvery: 3"), in: folder)
        for (run, captures) in [(1, 3), (2, 3)] {
            let session = try await RunningProcess.start(program: try shutterpipeBinary(), ["run", "--config", config], in: folder.path)
            for index in 1...captures {
                session.send("capture\n")
                await session.waitForOutput(on: .stdout, "answer \(index) of run \(run)") { output in
                    output.split(separator: "\n").count >= index
                }
            }
            session.closeInput()
            let outcome = await session.wait()
            #expect(outcome.status == 4, "run \(run): one shot of three fails: \(outcome.stderr)")
        }
        let shots = try await listedShots(["--config", config], in: folder)
        #expect(shots.count == 6)
        #expect(Set(shots.map(\.id)).count == 6, "one id per shot")
        #expect(shots.map(\.id) == shots.map(\.id).sorted(by: >), "newest first")
        #expect(Set(shots.compactMap(\.sessionRun)).count == 2 && Set(shots.compactMap(\.session)) == ["studio"])
        let failed = shots.filter { $0.state == .failed }
        #expect(failed.count == 2 && failed.allSatisfy { $0.failureCause == "cameraFailure" && $0.failureMessage?.contains("simulated failure of capture 3") == true })
        #expect(failed.allSatisfy { $0.files.isEmpty && $0.runNumber == 3 })
        let ids = shots.compactMap(\.shotID)
        #expect(ids.count == 6 && Set(ids.map(\.run)).count == 2 && ids.map(\.number).sorted() == [1, 1, 2, 2, 3, 3],
                "one ShotID per shot, failed ones too, from one counter per run: \(ids)")
        for shot in shots where shot.state == .stored {
            #expect(shot.trigger == "stdin" && shot.camera == "Test Body")
            #expect(shot.asked != nil && shot.fired != nil && shot.stored != nil)
            if let asked = shot.asked, let stored = shot.stored { #expect(asked <= stored) }
            #expect(shot.files.count == 1)
            for file in shot.files {
                #expect(file.kind == .jpeg && !file.missing)
                #expect(file.size == (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int))
                #expect(file.sha256 == (try await sha256sum(file.path)))
            }
        }
        #expect(Set(shots.flatMap(\.files).map(\.path)) == photosOnDisk(folder.file("photos")))
        // The ids stay: a third run adds, and lists the first ones unchanged.
        _ = try await shutterpipe(["run", "--config", config], input: "capture\n", in: folder.path)
        let again = try await listedShots(["--config", config], in: folder)
        #expect(again.count == 7 && Array(again.dropFirst()) == shots)
    }

    @Test("rebuild makes the catalogue from the photos and the sidecars other programs wrote: pairs grouped, ratings and labels read")
    func rebuild() async throws {
        let folder = TemporaryDirectory("catalogue-rebuild")
        let shoot = folder.file("shoot")
        try FileManager.default.createDirectory(atPath: "\(shoot)/day2", withIntermediateDirectories: true)
        let fixtures = "\(repositoryRoot)/Plugins/FileStub/Tests/Fixtures"
        try copyTestFile("\(fixtures)/IMG_0001.JPG", to: "\(shoot)/IMG_0001.JPG")
        try copyTestFile("\(fixtures)/IMG_0002.JPG", to: "\(shoot)/day2/IMG_0002.JPG")
        try Data("raw".utf8).writeTestFile("\(shoot)/day2/IMG_0002.CR2")
        // Sidecars written by exiftool, in both namings.
        _ = try await ExifTool.run(["-q", "-o", "\(shoot)/IMG_0001.JPG.xmp", "-XMP-xmp:Rating=3", "-XMP-xmp:Label=Green", "\(shoot)/IMG_0001.JPG"])
        _ = try await ExifTool.run(["-q", "-o", "\(shoot)/day2/IMG_0002.xmp", "-XMP-xmp:Rating=-1", "\(shoot)/day2/IMG_0002.JPG"])
        let outcome = try await shutterpipe(["shots", "rebuild", shoot], in: folder.path)
        #expect(outcome.status == 0 && outcome.stdout.contains("2 shot(s)"), "\(outcome.stdout) \(outcome.stderr)")
        let catalogue = "\(shoot)/.shutterpipe/catalogue.sqlite"
        let shots = try await listedShots(["--catalogue", catalogue], in: folder)
        try #require(shots.count == 2)
        let single = try #require(shots.first { $0.files.count == 1 })
        let pair = try #require(shots.first { $0.files.count == 2 })
        #expect(single.rating == 3 && single.label == "Green" && single.pick == .none && single.state == .imported)
        #expect(pair.pick == .rejected && pair.rating == 0)
        #expect(try await listedShots(["--catalogue", catalogue, "--label", "green"], in: folder).map(\.id) == [single.id])
        let paths = try await shutterpipe(["shots", "--catalogue", catalogue, "--paths"], in: folder.path)
        #expect(Set(paths.lines) == photosOnDisk(shoot))
        // Again: the old one is kept aside, the new one has the same shots.
        let again = try await shutterpipe(["shots", "rebuild", shoot], in: folder.path)
        #expect(again.status == 0 && again.stderr.contains(".before-rebuild-"), "\(again.stderr)")
        #expect(try await listedShots(["--catalogue", catalogue], in: folder).count == 2)
    }

    @Test("kill -9 during a burst, then a restart: the catalogue agrees with the disk, every photo once")
    func killDuringBurst() async throws {
        let folder = TemporaryDirectory("catalogue-kill")
        let config = try writeConfig(cataloguePipeline(folder.file("photos")), in: folder)
        for round in 1...2 {
            let session = try await RunningProcess.start(program: try shutterpipeBinary(), ["run", "--config", config], in: folder.path)
            for _ in 1...8 { session.send("capture\n") }
            await session.waitForOutput(on: .stdout, "three answers of round \(round)") { output in
                output.split(separator: "\n").count >= 3
            }
            session.killGroup()
            await session.waitAfterKill()
        }
        // The next start reconciles before its first shot.
        let restart = try await shutterpipe(["run", "--config", config], input: "capture\n", in: folder.path)
        #expect(restart.status == 0, "\(restart.stderr)")
        let shots = try await listedShots(["--config", config], in: folder)
        let listed = shots.flatMap(\.files).filter { !$0.missing }.map(\.path)
        #expect(listed.count == Set(listed).count, "each file once")
        #expect(Set(listed) == photosOnDisk(folder.file("photos")))
        #expect(listed.count >= 7, "at least three stored per round, and the last shot")
    }

    @Test("a damaged catalogue is moved aside with a log line and made again from the photos")
    func corruptCatalogue() async throws {
        let folder = TemporaryDirectory("catalogue-corrupt")
        let config = try writeConfig(cataloguePipeline(folder.file("photos")), in: folder)
        _ = try await shutterpipe(["run", "--config", config], input: "capture\ncapture\n", in: folder.path)
        let file = folder.file("photos/.shutterpipe/catalogue.sqlite")
        try Data(repeating: 0x5a, count: 8192).writeTestFile(file)
        let outcome = try await shutterpipe(["run", "--config", config], input: "capture\n", in: folder.path)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("was damaged: moved aside to '\(Catalogue.absolute(file)).corrupt-"), "\(outcome.stderr)")
        #expect(folder.names("photos/.shutterpipe").contains { $0.hasPrefix("catalogue.sqlite.corrupt-") })
        let shots = try await listedShots(["--config", config], in: folder)
        #expect(shots.count == 3 && shots.filter { $0.state == .imported }.count == 2)
        #expect(Set(shots.flatMap(\.files).map(\.path)) == photosOnDisk(folder.file("photos")))
    }

    @Test("a catalogue that cannot be written costs no shot: every capture answered photoSuccess, the failure logged once; the next start records them")
    func unwritableCatalogue() async throws {
        let folder = TemporaryDirectory("catalogue-unwritable")
        let config = try writeConfig(cataloguePipeline(folder.file("photos")), in: folder)
        // A folder where the catalogue file should be: no user, root included, can open it as a database.
        try FileManager.default.createDirectory(atPath: folder.file("photos/.shutterpipe/catalogue.sqlite"), withIntermediateDirectories: true)
        let outcome = try await shutterpipe(["run", "--config", config], input: "capture\ncapture\ncapture\n", in: folder.path)
        #expect(outcome.status == 0 && outcome.lines.prefix(3).allSatisfy { $0.hasPrefix("photoSuccess") }, "\(outcome.stdout)\n\(outcome.stderr)")
        #expect(outcome.stderr.components(separatedBy: "error: catalogue: cannot open the catalogue").count == 2, "logged once: \(outcome.stderr)")
        #expect(outcome.stderr.contains("3 shot(s) not recorded"), "\(outcome.stderr)")
        try FileManager.default.removeItem(atPath: folder.file("photos/.shutterpipe/catalogue.sqlite"))
        _ = try await shutterpipe(["run", "--config", config], input: "capture\n", in: folder.path)
        let shots = try await listedShots(["--config", config], in: folder)
        #expect(shots.count == 4 && Set(shots.flatMap(\.files).map(\.path)) == photosOnDisk(folder.file("photos")))
    }

    @Test("a catalogue from a newer shutterpipe is refused with the fix; catalogue: off makes none; a path places it")
    func schemaAndPlacement() async throws {
        let folder = TemporaryDirectory("catalogue-schema")
        let placed = folder.file("elsewhere/shoot.sqlite")
        let config = try writeConfig(cataloguePipeline(folder.file("photos"), top: "catalogue:\n  path: \(placed)"), in: folder)
        _ = try await shutterpipe(["run", "--config", config], input: "capture\n", in: folder.path)
        #expect(!folder.names("photos").contains(".shutterpipe"))
        #expect(try await listedShots(["--config", config], in: folder).count == 1)
        // user_version is the big-endian word at offset 60 of the header; the WAL was
        // checkpointed into the file when the last connection closed.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: placed))
        try handle.seek(toOffset: 60)
        try handle.write(contentsOf: Data([0, 0, 0, 99]))
        try handle.close()
        let refused = try await shutterpipe(["shots", "--config", config], in: folder.path)
        #expect(refused.status == 1 && refused.stderr.contains("was written by a newer shutterpipe (schema 99; this one reads up to 6): upgrade shutterpipe"), "\(refused.stderr)")
        let session = try await shutterpipe(["run", "--config", config], input: "capture\n", in: folder.path)
        #expect(session.status == 0 && session.lines.first?.hasPrefix("photoSuccess") == true, "a newer catalogue costs no shot: \(session.stderr)")

        let off = try writeConfig(cataloguePipeline(folder.file("plain"), top: "catalogue: off"), in: folder, name: "off.yaml")
        _ = try await shutterpipe(["run", "--config", off], input: "capture\n", in: folder.path)
        #expect(!folder.names("plain").contains(".shutterpipe"))
        let none = try await shutterpipe(["shots", "--config", off], in: folder.path)
        #expect(none.status == 1 && none.stderr.contains("turns the catalogue off"), "\(none.stderr)")
    }

    @Test("10,000 shots: listed whole as JSON, filtered by rating and session")
    func tenThousandShots() async throws {
        let folder = TemporaryDirectory("catalogue-10k")
        let path = folder.file("big.sqlite")
        try await offThePool {
            let catalogue = try Catalogue.open(at: path)
            let session = try catalogue.startSession(name: "big")
            let start = Date(timeIntervalSince1970: 1_790_000_000)
            let shots = (0..<10_000).map { index in
                ShotRecord(runNumber: index + 1, trigger: "socket", camera: "A", fired: start.addingTimeInterval(Double(index)), stored: start.addingTimeInterval(Double(index) + 0.5),
                           state: .stored, files: [CatalogueFile(path: "/shoot/IMG_\(index).JPG", size: 1000 + index, kind: .jpeg)], rating: index % 6)
            }
            try catalogue.record(shots, session: session)
        }
        let all = try await listedShots(["--catalogue", path], in: folder)
        #expect(all.count == 10_000 && all.first?.runNumber == 10_000 && all.last?.runNumber == 1)
        let rated = try await listedShots(["--catalogue", path, "--rating", ">=5", "--session", "big", "--limit", "3"], in: folder)
        #expect(rated.map(\.rating) == [5, 5, 5] && rated.map(\.runNumber) == [9_996, 9_990, 9_984])
    }

    @Test("the hand-written JSON is the document JSONEncoder makes of the same shots: escapes, absent values, dates, numbers")
    func jsonMatchesEncoder() throws {
        var exif = ExifSummary()
        exif.aperture = 5.6
        exif.focalLength = 85
        exif.iso = 400
        exif.exposureTime = "1/125"
        exif.lens = "EF 85mm \"L\" \\ f/1.4"
        var full = CatalogueShot(id: 7, session: "Ann's \"look\" 12\n", sessionRun: 3, shotID: ShotID(run: "20261203T150807Z-4f2a", number: 2), runNumber: 2, trigger: "stdin", camera: "A/B", cameraPort: nil,
                                 asked: Date(timeIntervalSince1970: 1_790_000_000.25), fired: Date(timeIntervalSince1970: 1_790_000_001),
                                 stored: nil, state: .failed, failureCause: "timeout", failureMessage: "tab\there \u{1}",
                                 exif: exif, rating: 4, label: "Red", pick: .rejected, keywords: ["α", "b\"c"],
                                 files: [CatalogueFile(path: "/x/é.jpg", size: 12, kind: .jpeg, sha256: "ab", cameraFile: nil, missing: true)])
        var second = CatalogueFile(path: "/x/B.cr2", size: 40, kind: .raw, cameraFile: "IMG_1.CR2")
        second.camera = "B\""
        full.files.append(second)
        full.frames = [CatalogueFrame(camera: nil, rating: 4, label: "Red"), CatalogueFrame(camera: "B\"", rating: 1, pick: .rejected)]
        full.sequence = CatalogueSequencePlace(name: "br\"acket", kind: "bracket", run: 2, index: 3, count: 5, setting: "shutterspeed", value: "1/60", ev: -1.5)
        let bare = CatalogueShot(id: 1, session: nil, sessionRun: nil, shotID: nil, runNumber: nil, trigger: nil, camera: nil, cameraPort: nil, asked: nil,
                                 fired: nil, stored: nil, state: .imported, failureCause: nil, failureMessage: nil, exif: ExifSummary(),
                                 rating: 0, label: nil, pick: .none, keywords: [], files: [])
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        let reference = try JSONSerialization.jsonObject(with: try encoder.encode([full, bare])) as? NSArray
        let ours = try JSONSerialization.jsonObject(with: Data(ShotJSON.encode([full, bare]).utf8)) as? NSArray
        #expect(ours != nil && ours == reference, "\(ShotJSON.encode([full, bare]))")
    }
}
