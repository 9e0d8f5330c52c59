#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import ShutterPipeCatalogue
import ShutterPipeFixtures
import ShutterPipeKit
import TestSupport
import Testing

/// A shot of two cameras, as a rig session records it: camera A's JPEG, camera B's RAW
/// and JPEG, each file knowing its camera.
private func rigShot(in folder: TemporaryDirectory, number: Int = 1) throws -> ShotRecord {
    func file(_ name: String, camera: String, _ data: Data) throws -> CatalogueFile {
        let path = folder.file(name)
        try data.writeTestFile(path)
        var file = Catalogue.describe(path, size: data.count, cameraFile: name)
        file.camera = camera
        return file
    }
    let jpeg = SyntheticJPEG.make(width: 32, height: 24, shot: number)
    return ShotRecord(shotID: ShotID(run: "rig", number: number), trigger: "stdin", camera: "rig", state: .stored, files: [
        try file("shot-\(number)-A.jpg", camera: "A", jpeg),
        try file("shot-\(number)-B.cr2", camera: "B", Data("SPRAW1 \(number)".utf8)),
        try file("shot-\(number)-B.jpg", camera: "B", jpeg),
    ])
}

@Suite("catalogue: a shot holds a frame per camera, each marked on its own", .timeLimit(.minutes(3)))
struct FramesTests {
    @Test("a mark of camera B's frame reaches B's sidecars and JPEG, never A's; the shot sums its frames up; filters find the frame; a mark of the whole shot reaches both, and a reject keeps B's stars")
    func framesMarkedApart() async throws {
        let folder = TemporaryDirectory("frames")
        // Recording and marking commit to SQLite and write sidecars with fsync: off the pool.
        let catalogue = try await offThePool { try Catalogue.open(at: folder.file("catalogue.sqlite")) }
        let id = try await offThePool { try catalogue.record(try rigShot(in: folder), session: try catalogue.startSession(name: "rig")) }
        let recorded = try #require(try catalogue.shot(id))
        #expect(recorded.frames.map(\.camera) == ["A", "B"] && recorded.files.map(\.camera) == ["A", "B", "B"])

        let marked = try await offThePool { try CatalogueMarker.mark(id, frames: .camera("B"), [.rating(4), .label("Green")], in: catalogue) }
        #expect(marked.shot.frame("B")?.marks == ShotMarks(rating: 4, label: "Green") && marked.shot.frame("A")?.marks == ShotMarks())
        #expect(marked.shot.rating == 4 && marked.shot.label == "Green", "the shot sums up its frames")
        #expect(Set(marked.written.map { URL(fileURLWithPath: $0).lastPathComponent }) == ["shot-1-B.cr2.xmp", "shot-1-B.xmp", "shot-1-B.jpg.xmp", "shot-1-B.jpg"], "\(marked.written)")
        let tags = try await ExifTool.tags([folder.file("shot-1-B.cr2.xmp"), folder.file("shot-1-B.xmp"), folder.file("shot-1-B.jpg"), folder.file("shot-1-A.jpg")])
        for name in ["shot-1-B.cr2.xmp", "shot-1-B.xmp", "shot-1-B.jpg"] {
            #expect(ungrouped(tags[folder.file(name)] ?? [:])["Rating"] == "4", "\(name): \(tags[folder.file(name)] ?? [:])")
        }
        #expect(ungrouped(tags[folder.file("shot-1-A.jpg")] ?? [:])["Rating"] == nil, "A's JPEG is not B's: \(tags[folder.file("shot-1-A.jpg")] ?? [:])")
        #expect(!FileManager.default.fileExists(atPath: folder.file("shot-1-A.jpg.xmp")))

        var filter = ShotFilter()
        filter.rating = (.atLeast, 4)
        #expect(try catalogue.shots(filter).map(\.id) == [id])
        filter.camera = "A"
        #expect(try catalogue.shots(filter).isEmpty, "camera A's frame is not rated")
        filter.camera = "B"
        #expect(try catalogue.shots(filter).map(\.id) == [id])

        let rejected = try await offThePool { try CatalogueMarker.mark(id, [.pick(.rejected)], in: catalogue).shot }
        #expect(rejected.frames.allSatisfy { $0.pick == .rejected } && rejected.pick == .rejected)
        #expect(rejected.frame("B")?.rating == 4, "a reject keeps the stars")
        let shown = try await ExifTool.tags([folder.file("shot-1-B.xmp"), folder.file("shot-1-A.jpg")])
        #expect(ungrouped(shown[folder.file("shot-1-B.xmp")] ?? [:])["Rating"] == "4")
        #expect(ungrouped(shown[folder.file("shot-1-A.jpg")] ?? [:])["Pick"] == "-1", "\(shown[folder.file("shot-1-A.jpg")] ?? [:])")
        let picked = try await offThePool { try CatalogueMarker.mark(id, frames: .camera("A"), [.pick(.picked)], in: catalogue).shot }
        #expect(picked.frame("A")?.pick == .picked && picked.frame("B")?.pick == .rejected && picked.pick == .picked, "one frame picked: the shot is picked")
        filter = ShotFilter()
        filter.rejectedOnly = true
        #expect(try catalogue.shots(filter).map(\.id) == [id], "a rejected frame is found")
    }

    @Test("a frame the shot does not have is refused, naming its frames; a shot of one camera has one frame, marked with or without naming it")
    func unknownFrame() async throws {
        let folder = TemporaryDirectory("frames-unknown")
        let catalogue = try await offThePool { try Catalogue.open(at: folder.file("catalogue.sqlite")) }
        let rig = try await offThePool { try catalogue.record(try rigShot(in: folder), session: nil) }
        #expect {
            try CatalogueMarker.mark(rig, frames: .camera("C"), [.rating(2)], in: catalogue)  // refused before any write
        } throws: { error in
            "\(error)".contains("shot \(rig) has no frame of camera 'C'; its frames are A, B")
        }
        let path = folder.file("single.jpg")
        try SyntheticJPEG.make(width: 16, height: 16, shot: 9).writeTestFile(path)
        let single = try await offThePool { try catalogue.record(ShotRecord(state: .stored, files: [Catalogue.describe(path, size: 1, cameraFile: "IMG_9.JPG")]), session: nil) }
        #expect(try catalogue.shot(single)?.frames == [CatalogueFrame(camera: nil)])
        #expect(try await offThePool { try CatalogueMarker.mark(single, frames: .camera(nil), [.rating(3)], in: catalogue).shot.rating } == 3)
        #expect(try await offThePool { try CatalogueMarker.mark(single, [.rating(5)], in: catalogue).shot.frames } == [CatalogueFrame(camera: nil, rating: 5)])
    }

    @Test("a catalogue from before frames (schema 4) opens with a frame per shot that carries the shot's marks")
    func schemaFourMigrates() async throws {
        let folder = TemporaryDirectory("frames-migrate")
        let path = folder.file("catalogue.sqlite")
        try await offThePool {
            let database = try SQLiteDatabase(path: path, create: true)
            for step in 0..<4 { try database.execute(CatalogueSchema.migrations[step]) }
            try database.execute("PRAGMA user_version = 4")
            try database.execute("INSERT INTO shots(id, state, rating, label, pick) VALUES (7, 'stored', 3, 'Red', -1)")
            try database.execute("INSERT INTO files(shot_id, path, size, kind) VALUES (7, '/x/IMG_7.JPG', 10, 'JPEG')")
        }
        let catalogue = try await offThePool { try Catalogue.open(at: path) }  // migrates: commits
        let shot = try #require(try catalogue.shot(7))
        #expect(shot.frames == [CatalogueFrame(camera: nil, rating: 3, label: "Red", pick: .rejected)] && shot.files.map(\.camera) == [nil])
        #expect(try await offThePool { try catalogue.mark(7, rating: 4).frames.first?.rating } == 4)
    }

    @Test("shots --camera marks one frame, the table shows each frame's marks, and --json holds the frames")
    func shotsCommandFrames() async throws {
        let folder = TemporaryDirectory("frames-command")
        let path = folder.file("catalogue.sqlite")
        let id = try await offThePool { try Catalogue.open(at: path).record(try rigShot(in: folder), session: nil) }
        let rated = try await shutterpipe(["shots", "rate", String(id), "3", "--camera", "A", "--catalogue", path], in: folder.path)
        #expect(rated.status == 0 && rated.stdout.hasPrefix("shot \(id) frame A: rating 3, label none, not picked"), "\(rated.stdout)\(rated.stderr)")
        let rejected = try await shutterpipe(["shots", "reject", String(id), "--camera", "B", "--catalogue", path], in: folder.path)
        #expect(rejected.status == 0 && rejected.stdout.hasPrefix("shot \(id) frame B: rejected"), "\(rejected.stdout)\(rejected.stderr)")
        let missing = try await shutterpipe(["shots", "rate", String(id), "3", "--camera", "Z", "--catalogue", path], in: folder.path)
        #expect(missing.status != 0 && missing.stderr.contains("has no frame of camera 'Z'; its frames are A, B"), "\(missing.stderr)")
        let table = try await shutterpipe(["shots", "--catalogue", path], in: folder.path)
        #expect(table.stdout.contains("A:*** B:x") && table.stdout.contains("A:- B:rejected"), "\(table.stdout)")
        let listed = try await listedShots(["--catalogue", path], in: folder)
        #expect(listed.first?.frames == [CatalogueFrame(camera: "A", rating: 3), CatalogueFrame(camera: "B", pick: .rejected)])
        #expect(listed.first?.rating == 3 && listed.first?.pick == Pick.none)
    }
}
