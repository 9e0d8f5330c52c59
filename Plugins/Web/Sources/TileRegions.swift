import CRegionDecoder
import Foundation
import ShutterPipeImaging
import ShutterPipeKit
import Synchronization

/// The 100 % view's first tiles of a JPEG, before its whole decode is done: the rectangle
/// the tiles asked for is decoded alone (``sp_region_decode``: the rows above entropy-decoded
/// only, the columns beside not transformed), in a fraction of the whole decode's time.
///
/// The browser asks for the tiles on screen at once, on several connections. Each region
/// decode reads the file from its start, so one per tile would repeat that work on 2 cores
/// for every tile; instead the requests for a photo are batched: the first asker decodes
/// the rectangle of every tile asked for by then, and the tiles asked for meanwhile make
/// the next batch, decoded by one of their askers. The whole decode (``FullImageCache``)
/// goes on beside, and serves the tiles once it is done.
///
/// Pixels are libjpeg's accurate integer DCT with fancy upsampling, as the whole decode's:
/// a tile is the same PNG either way (tested).
final class TileRegions: Sendable {
    /// A decoded rectangle of the upright picture, at `x`, `y`.
    struct Region: Sendable {
        let image: RGBImage
        let x: Int
        let y: Int
    }

    /// A rectangle of the upright picture.
    struct Rect: Sendable, Equatable {
        var x: Int, y: Int, width: Int, height: Int

        func union(_ other: Rect) -> Rect {
            let left = min(x, other.x), top = min(y, other.y)
            return Rect(x: left, y: top, width: max(x + width, other.x + other.width) - left, height: max(y + height, other.y + other.height) - top)
        }
    }

    private enum Turn: Sendable { case region(Region), decodeNext }
    private struct Batch { var waiting: [(rect: Rect, job: ImageJob<Turn>)] = [] }

    /// The most pixels one batch decodes: 16 tiles, 12 MB of RGB, a screen at 100 % and
    /// more. Tiles far apart (a request may ask for any) are decoded in batches of their own,
    /// never as one rectangle the size of the photo beside the whole decode's budget.
    static let largestRegion = 16 * FullImageCache.tileSize * FullImageCache.tileSize

    private let budget: DecodeBudget
    private let log: Logger
    /// Per photo, the requests waiting for the batch after the one being decoded.
    private let batches = Mutex<[String: Batch]>([:])

    init(budget: DecodeBudget, log: Logger = .discarding) {
        self.budget = budget
        self.log = log
    }

    /// The pixels of `rect` (upright, inside the picture) of `jpeg`, whose EXIF orientation is
    /// `orientation` and upright size `width`×`height`: decoded in a batch with the other
    /// rectangles of the same photo asked for meanwhile. Blocks the calling thread (a
    /// connection's own), never the pool.
    func pixels(of key: String, jpeg: Data, orientation: Int, width: Int, height: Int, rect: Rect) throws(ShutterError) -> Region {
        let job = ImageJob<Turn>()
        let first = batches.withLock { batches -> Bool in
            if batches[key] != nil {
                batches[key]!.waiting.append((rect, job))
                return false
            }
            batches[key] = Batch(waiting: [(rect, job)])
            return true
        }
        if !first, case .region(let region) = try job.result.get() { return region }
        // This request's turn to decode: its own rectangle, and those waiting now as long as
        // together they stay within `largestRegion` (the others make the next batch).
        let (batch, union) = batches.withLock { batches in
            var union = rect, taken: [(rect: Rect, job: ImageJob<Turn>)] = [], left: [(rect: Rect, job: ImageJob<Turn>)] = []
            for item in batches[key]?.waiting ?? [] {
                let grown = union.union(item.rect)
                if item.job === job || grown.width * grown.height <= Self.largestRegion {
                    union = grown
                    taken.append(item)
                } else {
                    left.append(item)
                }
            }
            batches[key]?.waiting = left
            return (taken, union)
        }
        let started = ContinuousClock.now
        let result = Result { () throws(ShutterError) -> Region in
            try Self.decode(jpeg, rect: union, orientation: orientation, width: width, height: height, budget: budget)
        }
        log.debug("\(union.width)×\(union.height) at \(union.x),\(union.y) of '\(key)' decoded alone for \(batch.count) tile request(s) in "
                  + String(format: "%.1f ms", (ContinuousClock.now - started) / .milliseconds(1)))
        for (_, waiting) in batch where waiting !== job { waiting.finish(result.map { .region($0) }) }
        // Those who asked meanwhile: the first of them decodes their batch, or nobody waits.
        let next = batches.withLock { batches -> ImageJob<Turn>? in
            guard let next = batches[key]?.waiting.first?.job else {
                batches[key] = nil
                return nil
            }
            return next
        }
        next?.finish(.success(.decodeNext))
        return try result.get()
    }

    /// `rect` of the upright picture: the stored picture's rectangle under it decoded, then
    /// turned upright.
    static func decode(_ jpeg: Data, rect: Rect, orientation: Int, width: Int, height: Int, budget: DecodeBudget) throws(ShutterError) -> Region {
        let stored = storedRect(rect, orientation: orientation, width: width, height: height)
        var pixels = [UInt8](repeating: 0, count: stored.width * stored.height * 3)
        var reason = [CChar](repeating: 0, count: 256)
        let decoded = jpeg.withUnsafeBytes { raw in
            sp_region_decode(raw.bindMemory(to: UInt8.self).baseAddress, raw.count, Int64(budget.maxPixels), Int32(stored.x), Int32(stored.y),
                             Int32(stored.width), Int32(stored.height), &pixels, &reason, reason.count)
        }
        guard decoded == 0 else {
            throw ShutterError(.unexpected, "the photo's region could not be decoded: \(String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))")
        }
        let image = RGBImage(pixels: pixels, width: stored.width, height: stored.height).oriented(orientation)
        return Region(image: image, x: rect.x, y: rect.y)
    }

    /// The rectangle of the stored picture (before its EXIF orientation is applied) that
    /// shows as `rect` of the upright one, `width`×`height`.
    static func storedRect(_ rect: Rect, orientation: Int, width: Int, height: Int) -> Rect {
        let storedHeight = orientation >= 5 && orientation <= 8 ? width : height, storedWidth = orientation >= 5 && orientation <= 8 ? height : width
        func source(_ x: Int, _ y: Int) -> (Int, Int) {
            RGBImage.storedPixel(shownAt: x, y, orientation: orientation, storedWidth: storedWidth, storedHeight: storedHeight)
        }
        let corners = [source(rect.x, rect.y), source(rect.x + rect.width - 1, rect.y + rect.height - 1)]
        let left = min(corners[0].0, corners[1].0), top = min(corners[0].1, corners[1].1)
        return Rect(x: left, y: top, width: abs(corners[0].0 - corners[1].0) + 1, height: abs(corners[0].1 - corners[1].1) + 1)
    }
}
