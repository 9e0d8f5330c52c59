/// Where a TIFF-based RAW (DNG, CR2, NEF, ARW, PEF, ORF, RW2) keeps its largest embedded
/// JPEG preview, and the photo's orientation, read from the front of the file as its
/// download comes: the camera worker then decodes that JPEG while its bytes arrive
/// (``StreamPreview``), as it does a JPEG's.
///
/// The same reading of a file's front as ``ExifThumbnail`` (which finds the small
/// thumbnail there), for the largest picture instead.
///
/// The front is the camera's, read within bounds: every offset is checked against the
/// bytes there, at most ``mostIFDs`` directories are looked at, and a front that needs
/// more than ``scanned`` bytes gives no window (the page decodes the stored file then).
public enum RawPreviewWindow {
    public enum Outcome: Equatable, Sendable {
        /// The JPEG's bytes in the file, and the orientation IFD0 gives (1 when none).
        case found(Range<Int>, orientation: Int)
        /// The front is too short yet: look again with at least this many bytes.
        case needs(Int)
        /// No baseline JPEG to decode (not a TIFF, or only the sensor's data).
        case none
    }

    /// The most of a file's front that is kept to find the window.
    public static let scanned = 1 << 20
    /// The most directories looked at (IFD0, its chain, their SubIFDs).
    public static let mostIFDs = 16

    private struct Directory {
        var width = 0
        var compression = 0
        var photometric = 0
        var strip: (offset: Int, length: Int)?
        var jpeg: (offset: Int, length: Int)?
        var orientation = 0
        var subIFDs: [Int] = []
        var next = 0
    }

    /// Looks at `front`, the first bytes of a file (all of it so far).
    public static func locate(_ front: UnsafeRawBufferPointer) -> Outcome {
        guard front.count >= 8 else { return .needs(8) }
        let little: Bool
        switch (front[0], front[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return .none
        }
        let reader = Bytes(reader: ExifThumbnail.Reader(bytes: front), little: little)
        // 42 for TIFF, DNG, CR2, NEF, ARW, PEF; ORF and RW2 use their own numbers.
        guard [42, 0x4F52, 0x5352, 0x55].contains(reader.u16(2)) else { return .none }
        var queue = [reader.u32(4)]
        var seen: Set<Int> = []
        var candidates: [(range: Range<Int>, width: Int)] = []
        var orientation = 1
        while let offset = queue.first, seen.count < mostIFDs {
            queue.removeFirst()
            guard offset > 0, seen.insert(offset).inserted else { continue }
            let directory: Directory
            switch read(offset, reader) {
            case .success(let read): directory = read
            case .failure(let needs) where needs.bytes <= scanned: return .needs(needs.bytes)
            case .failure: continue  // out of reach: the previews found so far
            }
            if seen.count == 1, (1...8).contains(directory.orientation) { orientation = directory.orientation }
            if let jpeg = directory.jpeg, jpeg.length > 0 {
                candidates.append((jpeg.offset..<jpeg.offset + jpeg.length, directory.width))
            }
            // A baseline JPEG of the picture (old-style 6, or 7 with RGB or YCbCr colour), not
            // the sensor's lossless JPEG (colour filter array, linear raw).
            if let strip = directory.strip, strip.length > 0, [6, 7].contains(directory.compression),
               directory.photometric == 0 || directory.photometric == 2 || directory.photometric == 6 {
                candidates.append((strip.offset..<strip.offset + strip.length, directory.width))
            }
            queue += directory.subIFDs
            queue.append(directory.next)
        }
        guard let largest = candidates.max(by: { ($0.width, $0.range.count) < ($1.width, $1.range.count) }) else { return .none }
        return .found(largest.range, orientation: orientation)
    }

    private struct Short: Error { let bytes: Int }

    private static func read(_ offset: Int, _ reader: Bytes) -> Result<Directory, Short> {
        guard offset + 2 <= reader.count else { return .failure(Short(bytes: offset + 2)) }
        let count = reader.u16(offset)
        let end = offset + 2 + count * 12 + 4
        guard end <= reader.count else { return .failure(Short(bytes: end)) }
        var directory = Directory()
        for index in 0..<count {
            let entry = offset + 2 + index * 12
            let tag = reader.u16(entry), type = reader.u16(entry + 2), values = reader.u32(entry + 4)
            // SHORT (3) and LONG (4) are the kinds these tags take; the first value is enough
            // for all but SubIFDs.
            guard type == 3 || type == 4, values >= 1 else { continue }
            let size = type == 3 ? 2 : 4
            let inline = values * size <= 4
            let at = inline ? entry + 8 : reader.u32(entry + 8)
            func value(_ index: Int) -> Int? {
                let place = at + index * size
                guard place + size <= reader.count else { return nil }
                return size == 2 ? reader.u16(place) : reader.u32(place)
            }
            switch tag {
            case 0x0100: directory.width = value(0) ?? 0
            case 0x0103: directory.compression = value(0) ?? 0
            case 0x0106: directory.photometric = value(0) ?? 0
            case 0x0112: directory.orientation = value(0) ?? 0
            case 0x0111 where values == 1: directory.strip = (value(0) ?? 0, directory.strip?.length ?? 0)
            case 0x0117 where values == 1: directory.strip = (directory.strip?.offset ?? 0, value(0) ?? 0)
            case 0x0201: directory.jpeg = (value(0) ?? 0, directory.jpeg?.length ?? 0)
            case 0x0202: directory.jpeg = (directory.jpeg?.offset ?? 0, value(0) ?? 0)
            case 0x014A:
                guard at + min(values, mostIFDs) * size <= reader.count else { return .failure(Short(bytes: at + min(values, mostIFDs) * size)) }
                directory.subIFDs = (0..<min(values, mostIFDs)).compactMap(value)
            default: break
            }
        }
        directory.next = reader.u32(offset + 2 + count * 12)
        return .success(directory)
    }

    /// The front in the file's byte order (``ExifThumbnail``'s reading, within the bytes there).
    private struct Bytes {
        let reader: ExifThumbnail.Reader
        let little: Bool
        var count: Int { reader.count }
        func u16(_ at: Int) -> Int { reader.number(at, 2, little) }
        func u32(_ at: Int) -> Int { reader.number(at, 4, little) }
    }
}
