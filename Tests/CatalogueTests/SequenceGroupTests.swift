import Foundation
import ShutterPipeKit
import TestSupport
import Testing

/// Every frame knows its place: the catalogue groups a sequence's frames by run, with the
/// kind, the index and the step's value, across a plain shot between two runs and a
/// restart (issue 45).
@Suite("catalogue: a sequence's frames are one group per run", .timeLimit(.minutes(2)))
struct SequenceGroupTests {
    @Test("a spin run twice with a shot between, then again after a restart: `shots --json` gives each frame its sequence, run, index, count and angle; `--sequence` lists only the frames, and the table says each one's place; and a catalogue rebuilt from the folder groups them again from their XMP")
    func groupedByRun() async throws {
        let folder = TemporaryDirectory("sequence-groups")
        let config = try writeConfig("""
        version: 1
        session: spins
        backend: {type: file-stub, width: 160, height: 120}
        triggers: [{type: stdin}]
        sinks: [{type: files, directory: \(folder.file("out"))}]
        sequences:
          turn: {kind: spin, frames: 3, command: [/bin/true]}
        """, in: folder)
        let first = try await shutterpipe(["run", "--config", config], input: "sequence turn\ncapture\nsequence turn\n", in: folder.path)
        #expect(first.status == 0, "\(first.stderr)")
        let second = try await shutterpipe(["run", "--config", config], input: "sequence turn\n", in: folder.path)
        #expect(second.status == 0, "\(second.stderr)")

        let shots = try await listedShots(["--config", config], in: folder).sorted { $0.id < $1.id }
        try #require(shots.count == 10, "\(shots.map(\.id))")
        #expect(shots[3].sequence == nil, "the plain shot belongs to no sequence")
        let places = shots.compactMap { shot in shot.sequence.map { (shot.sessionRun ?? 0, $0) } }
        let expected: [(Int, CatalogueSequencePlace)] = [1, 1, 1, 1, 1, 1, 2, 2, 2].enumerated().map { position, sessionRun in
            let run = position < 3 ? 1 : position < 6 ? 2 : 1
            let index = position % 3 + 1
            return (sessionRun, CatalogueSequencePlace(name: "turn", kind: "spin", run: run, index: index, count: 3, setting: "angle", value: String((index - 1) * 120)))
        }
        #expect(places.map(\.0) == expected.map(\.0) && places.map(\.1) == expected.map(\.1), "\(places)")

        let only = try await shutterpipe(["shots", "--sequence", "turn", "--config", config], in: folder.path)
        #expect(only.status == 0 && only.stdout.contains("9 shot(s)") && only.stdout.contains("SEQUENCE"), "\(only.stdout) \(only.stderr)")
        #expect(only.stdout.contains("turn#2 3/3 angle=240") && only.stdout.contains("turn#1 1/3 angle=0"), "\(only.stdout)")
        let none = try await shutterpipe(["shots", "--sequence", "other", "--config", config], in: folder.path)
        #expect(none.stdout.contains("0 shot(s)"), "\(none.stdout)")

        // The disk is the truth: a catalogue made again from the folder groups the frames
        // from the XMP in each JPEG, into runs in the order they were taken.
        let rebuilt = folder.file("rebuilt.sqlite")
        let made = try await shutterpipe(["shots", "rebuild", folder.file("out"), "--catalogue", rebuilt], in: folder.path)
        #expect(made.status == 0, "\(made.stdout) \(made.stderr)")
        let imported = try await listedShots(["--catalogue", rebuilt], in: folder).sorted { ($0.files.first?.path ?? "") < ($1.files.first?.path ?? "") }
        #expect(imported.count == 10 && imported[3].sequence == nil, "\(imported.map(\.sequence))")
        #expect(imported.compactMap(\.sequence).map(\.run) == [1, 1, 1, 2, 2, 2, 3, 3, 3], "\(imported.map(\.sequence))")
        #expect(imported.compactMap(\.sequence).map(\.index) == [1, 2, 3, 1, 2, 3, 1, 2, 3] && imported.compactMap(\.sequence?.value) == ["0", "120", "240", "0", "120", "240", "0", "120", "240"])
    }
}
