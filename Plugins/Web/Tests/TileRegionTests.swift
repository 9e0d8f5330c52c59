import Foundation
import TestSupport
import Testing
@testable import WebTrigger

/// The 100 % view's tiles of a JPEG not yet decoded whole come from a decode of their
/// region alone (TileRegions); they must be the very pixels of the whole decode.
@Suite("web: 100 % tiles decoded by region, before the whole decode", .timeLimit(.minutes(3)))
struct TileRegionTests {
    /// A 1300×1000 JPEG (4:2:0, as Pillow and cameras write it) with the EXIF orientation given.
    static func photo(orientation: Int, in folder: TemporaryDirectory) async throws -> String {
        let path = folder.file("IMG_\(orientation).JPG")
        let made = try await runProgram(["/usr/bin/python3", "\(repositoryRoot)/Tests/Browser/pixels.py", "tagged", path, "1300", "1000", String(orientation)])
        try #require(made.status == 0, "\(made.errors)")
        return path
    }

    @Test("every tile's region decoded alone, and a rectangle across tiles, is the whole decode's pixels exactly, in each EXIF orientation", arguments: 1...8)
    func sameAsWhole(orientation: Int) async throws {
        let folder = TemporaryDirectory("tile-regions")
        let path = try await Self.photo(orientation: orientation, in: folder)
        let mismatches = try await offThePool { () -> [String] in
            let jpeg = try Data(contentsOf: URL(fileURLWithPath: path))
            let whole = try FullImageCache.decode(path, budget: .defaults)
            let size = FullImageCache.tileSize
            var rects: [TileRegions.Rect] = []
            for row in 0..<((whole.height + size - 1) / size) {
                for column in 0..<((whole.width + size - 1) / size) {
                    let x = column * size, y = row * size
                    rects.append(.init(x: x, y: y, width: min(size, whole.width - x), height: min(size, whole.height - y)))
                }
            }
            // Odd offsets and sizes: not on any MCU's edge.
            rects.append(.init(x: 37, y: 301, width: 555, height: 421))
            var mismatches: [String] = []
            for rect in rects {
                let region = try TileRegions.decode(jpeg, rect: rect, orientation: orientation, width: whole.width, height: whole.height, budget: .defaults)
                guard region.image.width == rect.width, region.image.height == rect.height, region.x == rect.x, region.y == rect.y else {
                    mismatches.append("\(rect): got \(region.image.width)×\(region.image.height) at \(region.x),\(region.y)")
                    continue
                }
                var differing: [Int] = []
                for line in 0..<rect.height {
                    let from = ((rect.y + line) * whole.width + rect.x) * 3
                    if Array(whole.pixels[from..<(from + rect.width * 3)]) != Array(region.image.pixels[(line * rect.width * 3)..<((line + 1) * rect.width * 3)]) {
                        differing.append(line)
                    }
                }
                if !differing.isEmpty { mismatches.append("\(rect): rows \(differing.prefix(8)) differ") }
            }
            return mismatches
        }
        #expect(mismatches.isEmpty, "orientation \(orientation): \(mismatches)")
    }

    @Test("fourteen requests for the six tiles of a photo at once (some twice), while its whole decode runs ahead: each is the PNG a whole decode gives; a tile outside the picture is none")
    func atOnce() async throws {
        let folder = TemporaryDirectory("tile-regions-at-once")
        let path = try await Self.photo(orientation: 6, in: folder)
        let tiles = (0..<12).map { ($0 % 2, $0 / 2 % 3) } + [(0, 2), (1, 2)]
        let expected = try await offThePool { () -> [Data?] in
            let decoded = FullImageCache(limit: 64 << 20)
            _ = try decoded.image(of: path)
            return try tiles.map { try decoded.tile(of: path, column: $0.0, row: $0.1) }
        }
        for round in 0..<3 {
            let cache = FullImageCache(limit: 64 << 20)
            let got = try await withThrowingTaskGroup(of: (Int, Data?).self) { group in
                for (index, tile) in tiles.enumerated() {
                    group.addTask { (index, try await offThePool { try cache.tile(of: path, column: tile.0, row: tile.1) }) }
                }
                var got = [Data?](repeating: nil, count: tiles.count)
                for try await (index, data) in group { got[index] = data }
                return got
            }
            for index in tiles.indices {
                #expect(got[index] != nil && got[index] == expected[index], "round \(round): tile \(tiles[index]) differs from the whole decode's")
            }
            #expect(try await offThePool { try cache.tile(of: path, column: 2, row: 0) } == nil, "the upright picture is 1000 wide: two columns")
            #expect(try await offThePool { try cache.tile(of: path, column: 0, row: 3) } == nil, "and 1300 high: three rows")
        }
    }

    @Test("tiles far apart asked for at once (the four corners of a 6000×4000 photo) are decoded in batches of at most 16 tiles' pixels, never as one rectangle the size of the photo; each tile the whole decode's")
    func farApart() async throws {
        let folder = TemporaryDirectory("tile-regions-far")
        let path = folder.file("IMG_0001.JPG")
        let made = try await runProgram(["/usr/bin/python3", "\(repositoryRoot)/Tests/Browser/pixels.py", "noise", path, "6000", "4000"])
        try #require(made.status == 0, "\(made.errors)")
        let corners = [(0, 0), (11, 0), (0, 7), (11, 7), (5, 3)]
        let expected = try await offThePool { () -> [Data?] in
            let decoded = FullImageCache(limit: 256 << 20)
            _ = try decoded.image(of: path)
            return try corners.map { try decoded.tile(of: path, column: $0.0, row: $0.1) }
        }
        let recorder = LogRecorder()
        let cache = FullImageCache(limit: 256 << 20, log: recorder.logger)
        let got = try await withThrowingTaskGroup(of: (Int, Data?).self) { group in
            for (index, tile) in corners.enumerated() {
                group.addTask { (index, try await offThePool { try cache.tile(of: path, column: tile.0, row: tile.1) }) }
            }
            var got = [Data?](repeating: nil, count: corners.count)
            for try await (index, data) in group { got[index] = data }
            return got
        }
        for index in corners.indices {
            #expect(got[index] != nil && got[index] == expected[index], "tile \(corners[index])")
        }
        let regions = recorder.messages.filter { $0.contains("decoded alone") }
        let sizes = regions.compactMap { $0.split(separator: " ").first?.split(separator: "×").compactMap { Int($0) } }.filter { $0.count == 2 }
        #expect(!sizes.isEmpty && sizes.count == regions.count, "\(recorder.messages)")
        #expect(sizes.allSatisfy { $0[0] * $0[1] <= TileRegions.largestRegion }, "\(regions)")
    }
}
