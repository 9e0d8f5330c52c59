#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeImaging
import ShutterPipeKit
import ShutterPipeSupport

/// A frame's place in its sequence as the files sink wrote it into XMP
/// (`shutterpipe:Sequence`, `SequenceKind`, `Frame`, `Frames`, `SequenceSetting`,
/// `SequenceValue`, `ExposureOffset`), in a sidecar or in the JPEG itself: what
/// `shots rebuild` groups imported frames by, since the disk is the truth.
enum SequencePlaceReader {
    static let namespace = XMPNamespace.shutterpipeSequence.uri

    /// The frame's place from `document`, its run not known yet (0); nil when it holds none.
    static func place(in document: XMPDocument) -> CatalogueSequencePlace? {
        guard let name = document.property(namespace, "Sequence"), !name.isEmpty,
              let index = document.property(namespace, "Frame").flatMap({ Int($0) }), index > 0 else { return nil }
        let count = document.property(namespace, "Frames").flatMap { Int($0) } ?? index
        return CatalogueSequencePlace(name: name, kind: document.property(namespace, "SequenceKind") ?? "", run: 0, index: index, count: max(count, index),
                                      setting: document.property(namespace, "SequenceSetting"), value: document.property(namespace, "SequenceValue"),
                                      ev: document.property(namespace, "ExposureOffset").flatMap { Double($0) })
    }

    /// The XMP packet inside the JPEG at `path` (its APP1 segment named by Adobe's
    /// namespace), read from the file's head without following a link; nil when it has none.
    static func embedded(in path: String) -> XMPDocument? {
        guard let file = try? UntrustedFile.open(path, limits: .init(bytes: 4_000_000_000, links: Int.max)) else { return nil }
        // The segments before the image data: a few hundred KB at most (EXIF, its preview, XMP).
        var head = [UInt8](repeating: 0, count: 512 * 1024)
        let count = head.withUnsafeMutableBytes { pread(file.descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 4 else { return nil }
        let bytes = head[..<count]
        // What was read of the header before a segment the head cuts off is still read.
        guard let xmp = JPEGSegments(bytes).first(0xE1, startingWith: JPEGSegments.xmpHeader, in: bytes) else { return nil }
        return try? XMPDocument(String(decoding: bytes[(xmp.payload.lowerBound + JPEGSegments.xmpHeader.count)..<xmp.range.upperBound], as: UTF8.self))
    }
}

/// Which run of each sequence a frame belongs to, in one session run (or one rebuild): a
/// frame whose index is not past the last one seen of its sequence starts the next run.
/// Frames come in the order they were taken (a failed frame is never stored, so it is
/// simply not seen).
struct SequenceRuns: Sendable {
    private var last: [String: (run: Int, index: Int)] = [:]

    mutating func place(of frame: SequenceFrame) -> CatalogueSequencePlace {
        place(CatalogueSequencePlace(name: frame.name, kind: frame.kind, run: 0, index: frame.index, count: frame.count,
                                     setting: frame.setting, value: frame.value, ev: frame.ev))
    }

    /// `place` with its run.
    mutating func place(_ place: CatalogueSequencePlace) -> CatalogueSequencePlace {
        var current = last[place.name] ?? (run: 0, index: .max)
        if place.index <= current.index { current.run += 1 }
        current.index = place.index
        last[place.name] = current
        var placed = place
        placed.run = current.run
        return placed
    }
}
