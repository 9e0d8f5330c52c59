import Foundation

/// Makes valid baseline JPEGs with distinct bytes for every shot number: a colour
/// gradient of 8×8 blocks and a comment naming the shot. Any JPEG decoder reads them;
/// exiftool reports no errors.
///
/// `detail` adds that many random AC coefficients to every block (0–63): fine noise that
/// does not compress, so a 6000×4000 image with detail 9 is about as large as a camera's
/// JPEG (10 MB). With detail 0 the encoder writes DC coefficients only and files stay tiny.
public enum SyntheticJPEG {
    /// A JPEG of `width`×`height` pixels for shot `shot`.
    /// `marker`, if given, draws a white square that moves one block to the right with each
    /// step (a live-view frame that visibly changes).
    public static func make(width: Int = 640, height: Int = 480, shot: Int, detail: Int = 0, marker: Int? = nil, comment: String? = nil) -> Data {
        let columns = (width + 7) / 8, rows = (height + 7) / 8
        let hue = Double(shot % 12) / 12.0 * 2 * Double.pi
        return encode(width: width, height: height, seed: UInt64(shot), detail: detail, comment: comment ?? "shutterpipe synthetic shot \(shot)") { column, row in
            let x = Double(column) / Double(max(columns - 1, 1)), y = Double(row) / Double(max(rows - 1, 1))
            var luma = 40 + 170 * (0.6 * x + 0.4 * (1 - y))
            if let marker, (column - marker % columns + columns) % columns < 4, abs(row - rows / 2) < 4 { luma = 250 }
            return (luma, 128 + 60 * cos(hue + 3 * y), 128 + 60 * sin(hue + 3 * x))
        }
    }

    /// A JPEG of `width`×`height` pixels whose every 8×8 block has one colour: `block`
    /// gives it (Y, Cb, Cr, each 0–255) for the block at `column`, `row`. `detail` and
    /// `seed`: the noise of ``make(width:height:shot:detail:marker:comment:)``.
    public static func encode(width: Int, height: Int, seed: UInt64 = 0, detail: Int = 0, comment: String,
                              block: (_ column: Int, _ row: Int) -> (Double, Double, Double)) -> Data {
        precondition(width > 0 && height > 0 && width <= 65_535 && height <= 65_535)
        let detail = min(max(detail, 0), 63)
        var random = SeededRandom(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ 1)
        var out = Data()
        out.reserveCapacity(1024 + width * height / 16)
        out += [0xFF, 0xD8]  // SOI
        // APP0 JFIF 1.01, 72 dpi
        segment(&out, 0xE0, [0x4A, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x01, 0x00, 0x48, 0x00, 0x48, 0x00, 0x00])
        segment(&out, 0xFE, Array(comment.utf8.prefix(60_000)))
        // DQT: table 0, all ones (DC-only content needs no quantisation)
        segment(&out, 0xDB, [0x00] + [UInt8](repeating: 1, count: 64))
        // SOF0: 8-bit, three components, no subsampling, all on table 0
        segment(&out, 0xC0, [0x08, UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF), 0x03,
                             0x01, 0x11, 0x00, 0x02, 0x11, 0x00, 0x03, 0x11, 0x00])
        // DHT: DC table 0 (the standard luminance table), AC table 0 (a single code: EOB)
        segment(&out, 0xC4, [0x00] + dcBits + dcValues + [0x10] + acBits + acValues)
        // SOS
        segment(&out, 0xDA, [0x03, 0x01, 0x00, 0x02, 0x00, 0x03, 0x00, 0x00, 0x3F, 0x00])

        var bits = BitWriter()
        var predictors = [0, 0, 0]
        let columns = (width + 7) / 8, rows = (height + 7) / 8
        for row in 0..<rows {
            for column in 0..<columns {
                let (luma, cb, cr) = block(column, row)
                for (component, sample) in [luma, cb, cr].enumerated() {
                    let dc = Int(((min(max(sample, 0), 255) - 128) * 8).rounded())
                    encodeDC(dc - predictors[component], into: &bits)
                    predictors[component] = dc
                    for _ in 0..<detail {  // symbol 0x05: run 0, size 5; then 5 bits of value
                        bits.write(code: 0b10, length: 2)
                        bits.write(code: UInt32(random.next() & 0x1F) | 0x10, length: 5)
                    }
                    if detail < 63 { bits.write(code: 0, length: 1) }  // EOB
                }
            }
        }
        out += bits.finish()
        out += [0xFF, 0xD9]  // EOI
        return out
    }

    private static let dcBits: [UInt8] = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]
    private static let dcValues: [UInt8] = Array(0...11)
    // AC table: EOB is "0", (run 0, size 5) is "10".
    private static let acBits: [UInt8] = [1, 1] + [UInt8](repeating: 0, count: 14)
    private static let acValues: [UInt8] = [0x00, 0x05]

    /// Canonical Huffman codes of the DC table, by category.
    private static let dcCodes: [(code: UInt32, length: Int)] = {
        var codes: [(UInt32, Int)] = []
        var code: UInt32 = 0
        for (index, count) in dcBits.enumerated() {
            for _ in 0..<count { codes.append((code, index + 1)); code += 1 }
            code <<= 1
        }
        return codes
    }()

    private static func encodeDC(_ difference: Int, into bits: inout BitWriter) {
        let magnitude = abs(difference)
        let category = magnitude == 0 ? 0 : (Int.bitWidth - magnitude.leadingZeroBitCount)
        let (code, length) = dcCodes[category]
        bits.write(code: code, length: length)
        if category > 0 {
            let value = difference >= 0 ? difference : difference + (1 << category) - 1
            bits.write(code: UInt32(value), length: category)
        }
    }

    private static func segment(_ out: inout Data, _ marker: UInt8, _ payload: [UInt8]) {
        let length = payload.count + 2
        out += [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)]
        out += payload
    }
}

/// A small, fast, seeded random number generator, so the same shot has the same bytes.
/// Packs bits most significant first, with JPEG byte stuffing.
private struct BitWriter {
    private var bytes: [UInt8] = []
    private var accumulator: UInt32 = 0
    private var count = 0

    mutating func write(code: UInt32, length: Int) {
        for shift in stride(from: length - 1, through: 0, by: -1) {
            accumulator = (accumulator << 1) | ((code >> UInt32(shift)) & 1)
            count += 1
            if count == 8 { flushByte() }
        }
    }

    mutating func finish() -> [UInt8] {
        while count != 0 { accumulator = (accumulator << 1) | 1; count += 1; if count == 8 { flushByte() } }
        return bytes
    }

    private mutating func flushByte() {
        let byte = UInt8(accumulator & 0xFF)
        bytes.append(byte)
        if byte == 0xFF { bytes.append(0x00) }
        accumulator = 0
        count = 0
    }
}
