import Foundation

/// The TIFF structure inside an Exif APP1, read strictly and edited append-only.
///
/// An edit never moves or rewrites an original byte, so every offset in the block, the
/// MakerNote's own included, stays valid: the new IFD0 (and a new EXIF or GPS sub-IFD
/// where those change) is appended after the old data, and the header's IFD0 pointer is
/// the one field that changes. The old IFD0's link to IFD1 (the thumbnail) is kept.
public struct TIFFEditor {
    public enum ByteOrder { case little, big }

    /// An IFD entry exactly as stored: type, count and the raw 4-byte value field.
    public struct Entry {
        public var tag: UInt16
        public var type: UInt16
        public var count: UInt32
        public var field: [UInt8]
    }

    /// An entry to add or replace, its value already encoded in the block's byte order.
    public struct NewEntry {
        public var tag: UInt16
        var type: UInt16
        var count: UInt32
        public var value: Data

        public init(tag: UInt16, type: UInt16, count: UInt32, value: Data) {
            self.tag = tag
            self.type = type
            self.count = count
            self.value = value
        }

        /// An existing entry whose value sits in its own field (4 bytes or fewer), so it
        /// can be copied into another block of the same byte order.
        public init?(inline entry: Entry) {
            guard let size = TIFFEditor.typeSizes[entry.type].map({ $0 * Int(entry.count) }), size <= 4 else { return nil }
            self.init(tag: entry.tag, type: entry.type, count: entry.count, value: Data(entry.field.prefix(size)))
        }
    }

    public struct IFD {
        var offset: Int
        public var entries: [Entry]
        var next: UInt32
    }

    public static let typeSizes: [UInt16: Int] = [1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 13: 4]


    /// Why the block is not safe to edit.
    public struct Malformed: Error, CustomStringConvertible {
        public var description: String
    }

    public static let exifPointerTag: UInt16 = 0x8769
    public static let gpsPointerTag: UInt16 = 0x8825

    public let tiff: Data
    public let order: ByteOrder
    public let ifd0: IFD
    public let exif: IFD?
    public let gps: IFD?

    /// Reads and checks the block: header, IFD0, and the EXIF and GPS sub-IFDs.
    public init(_ block: Data) throws(Malformed) {
        let tiff = block.startIndex == 0 ? block : Data(block)
        self.tiff = tiff
        guard tiff.count >= 8 else { throw Malformed(description: "TIFF header shorter than 8 bytes") }
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): order = .little
        case (0x4D, 0x4D): order = .big
        default: throw Malformed(description: "unknown byte order mark")
        }
        let reader = Reader(data: tiff, order: order)
        guard reader.u16(2) == 42 else { throw Malformed(description: "TIFF magic number is not 42") }
        let ifd0 = try reader.ifd(at: Int(reader.u32(4)), name: "IFD0")
        self.ifd0 = ifd0
        var seen: Set<Int> = [ifd0.offset]
        func subIFD(_ tag: UInt16, _ name: String) throws(Malformed) -> IFD? {
            guard let entry = ifd0.entries.first(where: { $0.tag == tag }) else { return nil }
            guard entry.type == 4 || entry.type == 13, entry.count == 1 else {
                throw Malformed(description: "\(name) pointer has type \(entry.type) and count \(entry.count)")
            }
            let offset = Int(reader.u32(field: entry.field))
            guard seen.insert(offset).inserted else { throw Malformed(description: "\(name) pointer loops back to another IFD") }
            return try reader.ifd(at: offset, name: name)
        }
        exif = try subIFD(Self.exifPointerTag, "ExifIFD")
        gps = try subIFD(Self.gpsPointerTag, "GPS IFD")
        if ifd0.next != 0 && Int(ifd0.next) >= tiff.count {
            throw Malformed(description: "IFD1 offset \(ifd0.next) is past the end of the block")
        }
    }

    /// The EXIF sub-IFD's ExifVersion as a number (0232 → 232), if it has a readable one.
    public var exifVersion: Int? {
        guard let entry = exif?.entries.first(where: { $0.tag == 0x9000 }), entry.type == 7, entry.count == 4 else { return nil }
        return Int(String(decoding: entry.field, as: UTF8.self))
    }

    /// Whether `tag` is present in the EXIF sub-IFD.
    public func exifContains(_ tag: UInt16) -> Bool { exif?.entries.contains { $0.tag == tag } ?? false }

    /// The block with the entries appended; `gpsEntries` adds a GPS IFD (only where the
    /// camera wrote none). Returns the new TIFF bytes.
    public func appending(ifd0 additions: [NewEntry], exif exifAdditions: [NewEntry], gps gpsEntries: [NewEntry]) -> Data {
        var out = tiff
        if out.count % 2 == 1 { out.append(0) }
        var ifd0Entries = merged(ifd0.entries.map(Either.old), additions)
        if !exifAdditions.isEmpty {
            let offset = write(merged((exif?.entries ?? []).map(Either.old), exifAdditions), next: exif?.next ?? 0, into: &out)
            ifd0Entries = merged(ifd0Entries, [pointer(Self.exifPointerTag, offset)])
        }
        if !gpsEntries.isEmpty && gps == nil {
            let offset = write(merged([], gpsEntries), next: 0, into: &out)
            ifd0Entries = merged(ifd0Entries, [pointer(Self.gpsPointerTag, offset)])
        }
        let newIFD0 = write(ifd0Entries, next: ifd0.next, into: &out)
        out.replaceSubrange(4..<8, with: encode32(UInt32(newIFD0)))
        return out
    }

    /// A 32-bit value from a raw entry field, in the block's order.
    public func u32(field: [UInt8]) -> UInt32 { Reader(data: tiff, order: order).u32(field: field) }

    /// A 32-bit value at `offset` of `data` (another buffer laid out in this order).
    public func u32(in data: Data, at offset: Int) -> UInt32 { Reader(data: data, order: order).u32(offset) }

    // MARK: Encoding

    public func encode16(_ value: UInt16) -> [UInt8] {
        order == .little ? [UInt8(value & 0xFF), UInt8(value >> 8)] : [UInt8(value >> 8), UInt8(value & 0xFF)]
    }

    public func encode32(_ value: UInt32) -> [UInt8] {
        let bytes = (0..<4).map { UInt8((value >> (8 * UInt32($0))) & 0xFF) }
        return order == .little ? bytes : bytes.reversed()
    }

    private func pointer(_ tag: UInt16, _ offset: Int) -> NewEntry {
        NewEntry(tag: tag, type: 4, count: 1, value: Data(encode32(UInt32(offset))))
    }

    /// `entries` with `additions` replacing same-tag ones, sorted by tag as TIFF wants.
    private func merged(_ entries: [Either], _ additions: [NewEntry]) -> [Either] {
        let replaced = Set(additions.map(\.tag))
        return (entries.filter { !replaced.contains($0.tag) } + additions.map(Either.new)).sorted { $0.tag < $1.tag }
    }

    private enum Either {
        case old(Entry)
        case new(NewEntry)
        var tag: UInt16 {
            switch self {
            case .old(let entry): return entry.tag
            case .new(let entry): return entry.tag
            }
        }
    }

    /// Appends an IFD and the values that do not fit in its entries; returns its offset.
    private func write(_ entries: [Either], next: UInt32, into out: inout Data) -> Int {
        if out.count % 2 == 1 { out.append(0) }
        let offset = out.count
        var values = Data()
        var valueOffset = offset + 2 + 12 * entries.count + 4
        var table = Data(encode16(UInt16(entries.count)))
        for entry in entries {
            switch entry {
            case .old(let old):
                table.append(contentsOf: encode16(old.tag) + encode16(old.type) + encode32(old.count) + old.field)
            case .new(let new):
                table.append(contentsOf: encode16(new.tag) + encode16(new.type) + encode32(new.count))
                if new.value.count <= 4 {
                    table.append(new.value)
                    table.append(contentsOf: [UInt8](repeating: 0, count: 4 - new.value.count))
                } else {
                    table.append(contentsOf: encode32(UInt32(valueOffset)))
                    values.append(new.value)
                    if new.value.count % 2 == 1 { values.append(0) }
                    valueOffset = offset + 2 + 12 * entries.count + 4 + values.count
                }
            }
        }
        table.append(contentsOf: encode32(next))
        out.append(table)
        out.append(values)
        return offset
    }
}

/// Bounds-checked reads in a byte order.
private struct Reader {
    public let data: Data
    public let order: TIFFEditor.ByteOrder

    public func u16(_ at: Int) -> UInt16 {
        let a = UInt16(data[at]), b = UInt16(data[at + 1])
        return order == .little ? a | b << 8 : a << 8 | b
    }

    public func u32(_ at: Int) -> UInt32 {
        let bytes = (0..<4).map { UInt32(data[at + $0]) }
        return order == .little ? bytes[0] | bytes[1] << 8 | bytes[2] << 16 | bytes[3] << 24
            : bytes[0] << 24 | bytes[1] << 16 | bytes[2] << 8 | bytes[3]
    }

    public func u32(field: [UInt8]) -> UInt32 {
        let bytes = field.map(UInt32.init)
        return order == .little ? bytes[0] | bytes[1] << 8 | bytes[2] << 16 | bytes[3] << 24
            : bytes[0] << 24 | bytes[1] << 16 | bytes[2] << 8 | bytes[3]
    }

    public func ifd(at offset: Int, name: String) throws(TIFFEditor.Malformed) -> TIFFEditor.IFD {
        guard offset >= 8, offset + 2 <= data.count else {
            throw TIFFEditor.Malformed(description: "\(name) offset \(offset) is outside the block")
        }
        let count = Int(u16(offset))
        guard count > 0, count <= 1000, offset + 2 + 12 * count + 4 <= data.count else {
            throw TIFFEditor.Malformed(description: "\(name) with \(count) entries does not fit in the block")
        }
        var entries: [TIFFEditor.Entry] = []
        for index in 0..<count {
            let at = offset + 2 + 12 * index
            let entry = TIFFEditor.Entry(tag: u16(at), type: u16(at + 2), count: u32(at + 4), field: [UInt8](data[(at + 8)..<(at + 12)]))
            guard let size = TIFFEditor.typeSizes[entry.type] else {
                throw TIFFEditor.Malformed(description: "\(name) tag 0x\(String(entry.tag, radix: 16)) has unknown type \(entry.type)")
            }
            let total = size * Int(entry.count)
            if total > 4 {
                let valueOffset = Int(u32(field: entry.field))
                guard valueOffset + total <= data.count, valueOffset >= 8 else {
                    throw TIFFEditor.Malformed(description: "\(name) tag 0x\(String(entry.tag, radix: 16)) points outside the block")
                }
            }
            entries.append(entry)
        }
        return TIFFEditor.IFD(offset: offset, entries: entries, next: u32(offset + 2 + 12 * count))
    }
}
