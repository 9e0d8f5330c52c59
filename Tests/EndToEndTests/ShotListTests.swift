import Foundation
import TestSupport
import Testing

/// A product studio's shift: a CSV of products shot in turn, each product's id the label
/// its photos carry, its plan a number of photos or a sequence.
@Suite("shot list: products shot in turn, from a CSV", .timeLimit(.minutes(3)))
struct ShotListTests {
    static func config(_ folder: TemporaryDirectory, list: String) throws -> String {
        try list.writeTestFile(folder.file("products.csv"))
        return try writeConfig("""
        version: 1
        session: shift
        backend: {type: file-stub, width: 320, height: 240}
        triggers: [{type: stdin}]
        sinks: [{type: files, directory: \(folder.file("out")), filename: "{label}-{seq:02}.{ext}"}]
        sequences:
          turn: {kind: spin, frames: 3, command: [/bin/true]}
        shotList: \(folder.file("products.csv"))
        """, in: folder)
    }

    @Test("the first product's id is the label at start; its planned photos taken, the next product's is; a product planned as a sequence is done by it; a scan of an id jumps to it, warning of the one left short; shots shotlist tells done and left")
    func inTurn() async throws {
        let folder = TemporaryDirectory("shot-list")
        let config = try Self.config(folder, list: "id,name,frames,sequence\r\nSKU-1,\"Mug, red\",2,\r\nSKU-2,Teapot,,turn\r\nSKU-3,Spoon,1,\r\nSKU-4,Fork,1,\r\n")
        let run = try await shutterpipe(["run", "--config", config], input: "capture\ncapture\nsequence turn\nlabel SKU-4\ncapture\n", in: folder.path)
        #expect(run.status == 0, "\(run.stderr)")
        let photos = folder.names("out").filter { $0.hasSuffix(".jpg") }.sorted()
        // {seq} counts the session's photos; {label} is each product's id.
        #expect(photos == ["SKU-1-01.jpg", "SKU-1-02.jpg", "SKU-2-03.jpg", "SKU-2-04.jpg", "SKU-2-05.jpg", "SKU-4-06.jpg"], "\(photos)\n\(run.stderr)")
        for line in ["shot list: product 1 of 4, SKU-1 (Mug, red): 2 photo(s)", "shot list: SKU-1 done (2 of 2)",
                     "shot list: product 2 of 4, SKU-2 (Teapot): sequence 'turn', 3 photo(s)", "shot list: SKU-2 done (3 of 3)",
                     "shot list: product 3 of 4, SKU-3 (Spoon): 1 photo(s)", "warning: shot list: SKU-3 left with 0 of 1 photo(s) planned",
                     "shot list: product 4 of 4, SKU-4 (Fork): 1 photo(s)", "shot list: SKU-4 done (1 of 1)", "shot list: product 3 of 4, SKU-3 (Spoon)"] {
            #expect(run.stderr.contains(line), "missing '\(line)':\n\(run.stderr)")
        }
        let status = try await shutterpipe(["shots", "shotlist", "--config", config], in: folder.path)
        #expect(status.status == 0, "\(status.stderr)")
        let rows = status.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(rows.first == ["ID", "NAME", "PLAN", "TAKEN", "LEFT"], "\(status.stdout)")
        #expect(rows.contains(["SKU-1", "Mug,", "red", "2", "2", "done"]) && rows.contains(["SKU-2", "Teapot", "turn", "(3)", "3", "done"])
                && rows.contains(["SKU-3", "Spoon", "1", "0", "1"]) && rows.contains(["SKU-4", "Fork", "1", "1", "done"]), "\(status.stdout)")
        #expect(status.stdout.contains("3 of 4 product(s) done, 1 left"), "\(status.stdout)")
    }

    @Test("mistakes in the CSV are said at validate with the CSV's line and column: a duplicate id, an unknown sequence, frames that are not a count, an unknown column, a link refused")
    func mistakes() async throws {
        let folder = TemporaryDirectory("shot-list-mistakes")
        let cases: [(String, String)] = [
            ("id,name\nA,x\nB,y\nA,z\n", "products.csv:4:1: shot list: the id 'A' is on line 2 already"),
            ("id,sequence\nA,turn\nB,spinn\n", "products.csv:3:3: shot list: no sequence 'spinn' in the config (the sequences are: turn)"),
            ("id,frames\nA,two\n", "products.csv:2:3: shot list: frames 'two' must be a whole number from 1 to 10000"),
            ("id,colour\nA,red\n", "products.csv:1:4: shot list: unknown column 'colour'; the columns are id, name, frames, sequence"),
        ]
        for (list, said) in cases {
            let config = try Self.config(folder, list: list)
            let checked = try await shutterpipe(["validate", config], in: folder.path)
            #expect(checked.status == 3 && checked.stderr.contains(said), "\(list): \(checked.stderr)")
        }
        let config = try Self.config(folder, list: "id\nA\n")
        try FileManager.default.removeItem(atPath: folder.file("products.csv"))
        try FileManager.default.createSymbolicLink(atPath: folder.file("products.csv"), withDestinationPath: "/etc/passwd")
        let linked = try await shutterpipe(["validate", config], in: folder.path)
        #expect(linked.status == 3 && linked.stderr.contains("the shot list '\(folder.file("products.csv"))' cannot be read"), "\(linked.stderr)")
    }
}
