import Foundation

/// A QR code (ISO/IEC 18004) of a short text, made here so that the share panel needs no
/// library and no CDN: byte mode, error correction level M (15 % of the code may be
/// lost), versions 1 to 10 (up to 213 bytes: a link with a token is about 70), the mask
/// with the lowest penalty.
struct QRCode: Sendable {
    /// `modules[y][x]`: dark or light.
    private(set) var modules: [[Bool]]
    var size: Int { modules.count }

    /// Level M, per version 1–10: codewords in all, error-correction codewords per block,
    /// blocks.
    private static let codewords = [26, 44, 70, 100, 134, 172, 196, 242, 292, 346]
    private static let eccPerBlock = [10, 16, 26, 18, 24, 16, 18, 22, 22, 26]
    private static let blocks = [1, 1, 1, 2, 2, 4, 4, 4, 5, 5]
    private static let alignment = [[], [6, 18], [6, 22], [6, 26], [6, 30], [6, 34], [6, 22, 38], [6, 24, 42], [6, 26, 46], [6, 28, 50]]

    private var function: [[Bool]]

    /// The code of `text`; `nil` when it is longer than version 10 holds.
    init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard let version = (1...10).first(where: { version in
            let capacity = Self.codewords[version - 1] - Self.eccPerBlock[version - 1] * Self.blocks[version - 1]
            return 4 + (version < 10 ? 8 : 16) + bytes.count * 8 <= capacity * 8
        }) else { return nil }
        let size = version * 4 + 17
        modules = Array(repeating: Array(repeating: false, count: size), count: size)
        function = modules
        drawFunctionPatterns(version)
        let data = Self.codewordsWithECC(Self.dataCodewords(bytes, version: version), version: version)
        drawCodewords(data)
        // The mask with the lowest penalty (each mask is its own inverse).
        var best = (mask: 0, penalty: Int.max)
        for mask in 0..<8 {
            applyMask(mask)
            drawFormatBits(mask)
            let penalty = self.penalty()
            if penalty < best.penalty { best = (mask, penalty) }
            applyMask(mask)
        }
        applyMask(best.mask)
        drawFormatBits(best.mask)
    }

    /// The code as SVG: one path of dark modules on white, with the four-module quiet zone.
    var svg: String {
        var path = ""
        for y in 0..<size { for x in 0..<size where modules[y][x] { path += "M\(x + 4) \(y + 4)h1v1h-1z" } }
        let side = size + 8
        return """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(side) \(side)" width="\(side * 8)" height="\(side * 8)" shape-rendering="crispEdges">\
        <rect width="\(side)" height="\(side)" fill="#fff"/><path d="\(path)" fill="#000"/></svg>
        """
    }

    // MARK: Data

    private static func dataCodewords(_ bytes: [UInt8], version: Int) -> [UInt8] {
        let capacity = codewords[version - 1] - eccPerBlock[version - 1] * blocks[version - 1]
        var bits: [Bool] = []
        func append(_ value: Int, _ count: Int) { for shift in stride(from: count - 1, through: 0, by: -1) { bits.append(value >> shift & 1 == 1) } }
        append(0b0100, 4)  // byte mode
        append(bytes.count, version < 10 ? 8 : 16)
        bytes.forEach { append(Int($0), 8) }
        append(0, min(4, capacity * 8 - bits.count))  // terminator
        append(0, (8 - bits.count % 8) % 8)
        var out = stride(from: 0, to: bits.count, by: 8).map { start in bits[start..<(start + 8)].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) } }
        var pad: UInt8 = 0xEC
        while out.count < capacity { out.append(pad); pad ^= 0xEC ^ 0x11 }
        return out
    }

    /// The data split into blocks, each with its Reed–Solomon codewords, interleaved.
    private static func codewordsWithECC(_ data: [UInt8], version: Int) -> [UInt8] {
        let count = blocks[version - 1], ecc = eccPerBlock[version - 1], raw = codewords[version - 1]
        let shortBlocks = count - raw % count, shortLength = raw / count
        let divisor = reedSolomonDivisor(ecc)
        var split: [[UInt8]] = []
        var start = 0
        for index in 0..<count {
            let length = shortLength - ecc + (index < shortBlocks ? 0 : 1)
            let block = Array(data[start..<(start + length)])
            start += length
            split.append(block + (index < shortBlocks ? [0] : []) + reedSolomonRemainder(block, divisor))
        }
        var out: [UInt8] = []
        for column in 0..<split[0].count {
            for (index, block) in split.enumerated() where column != shortLength - ecc || index >= shortBlocks {
                out.append(block[column])
            }
        }
        return out
    }

    private static func multiply(_ x: UInt8, _ y: UInt8) -> UInt8 {
        var z = 0
        for bit in stride(from: 7, through: 0, by: -1) {
            z = (z << 1) ^ ((z >> 7) * 0x11D)
            z ^= Int(y >> bit & 1) * Int(x)
        }
        return UInt8(z & 0xFF)
    }

    private static func reedSolomonDivisor(_ degree: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: degree)
        result[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            for index in 0..<degree {
                result[index] = multiply(result[index], root)
                if index + 1 < degree { result[index] ^= result[index + 1] }
            }
            root = multiply(root, 0x02)
        }
        return result
    }

    private static func reedSolomonRemainder(_ data: [UInt8], _ divisor: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: divisor.count)
        for byte in data {
            let factor = byte ^ result.removeFirst()
            result.append(0)
            for index in result.indices { result[index] ^= multiply(divisor[index], factor) }
        }
        return result
    }

    // MARK: Drawing

    private mutating func set(_ x: Int, _ y: Int, _ dark: Bool) {
        modules[y][x] = dark
        function[y][x] = true
    }

    private mutating func drawFunctionPatterns(_ version: Int) {
        for index in 0..<size {
            set(6, index, index % 2 == 0)
            set(index, 6, index % 2 == 0)
        }
        for (cx, cy) in [(3, 3), (size - 4, 3), (3, size - 4)] {
            for dy in -4...4 {
                for dx in -4...4 where (0..<size).contains(cx + dx) && (0..<size).contains(cy + dy) {
                    let distance = max(abs(dx), abs(dy))
                    set(cx + dx, cy + dy, distance != 2 && distance != 4)
                }
            }
        }
        let positions = Self.alignment[version - 1]
        for (i, cx) in positions.enumerated() {
            for (j, cy) in positions.enumerated() {
                let corner = (i == 0 && j == 0) || (i == 0 && j == positions.count - 1) || (i == positions.count - 1 && j == 0)
                guard !corner else { continue }
                for dy in -2...2 { for dx in -2...2 { set(cx + dx, cy + dy, max(abs(dx), abs(dy)) != 1) } }
            }
        }
        drawFormatBits(0)  // reserves the area; drawn again with the chosen mask
        if version >= 7 {
            var remainder = version
            for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
            let bits = version << 12 | remainder
            for index in 0..<18 {
                let dark = bits >> index & 1 == 1
                let a = size - 11 + index % 3, b = index / 3
                set(a, b, dark)
                set(b, a, dark)
            }
        }
    }

    private mutating func drawFormatBits(_ mask: Int) {
        let data = 0 << 3 | mask  // level M is 00
        var remainder = data
        for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
        let bits = (data << 10 | remainder) ^ 0x5412
        func bit(_ index: Int) -> Bool { bits >> index & 1 == 1 }
        for index in 0...5 { set(8, index, bit(index)) }
        set(8, 7, bit(6))
        set(8, 8, bit(7))
        set(7, 8, bit(8))
        for index in 9..<15 { set(14 - index, 8, bit(index)) }
        for index in 0..<8 { set(size - 1 - index, 8, bit(index)) }
        for index in 8..<15 { set(8, size - 15 + index, bit(index)) }
        set(8, size - 8, true)  // the dark module
    }

    private mutating func drawCodewords(_ data: [UInt8]) {
        var index = 0
        var right = size - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            for vertical in 0..<size {
                for offset in 0..<2 {
                    let x = right - offset
                    let y = (right + 1) & 2 == 0 ? size - 1 - vertical : vertical
                    if !function[y][x] && index < data.count * 8 {
                        modules[y][x] = data[index >> 3] >> (7 - index & 7) & 1 == 1
                        index += 1
                    }
                }
            }
            right -= 2
        }
    }

    private mutating func applyMask(_ mask: Int) {
        for y in 0..<size {
            for x in 0..<size where !function[y][x] {
                let invert: Bool
                switch mask {
                case 0: invert = (x + y) % 2 == 0
                case 1: invert = y % 2 == 0
                case 2: invert = x % 3 == 0
                case 3: invert = (x + y) % 3 == 0
                case 4: invert = (x / 3 + y / 2) % 2 == 0
                case 5: invert = x * y % 2 + x * y % 3 == 0
                case 6: invert = (x * y % 2 + x * y % 3) % 2 == 0
                default: invert = ((x + y) % 2 + x * y % 3) % 2 == 0
                }
                if invert { modules[y][x].toggle() }
            }
        }
    }

    /// The standard's penalty: runs of five or more, 2×2 blocks, finder-like patterns, and
    /// an imbalance of dark and light.
    private func penalty() -> Int {
        var total = 0
        let finderLike: [[Bool]] = [[true, false, true, true, true, false, true, false, false, false, false],
                                    [false, false, false, false, true, false, true, true, true, false, true]]
        for transposed in [false, true] {
            for a in 0..<size {
                let line = (0..<size).map { b in transposed ? modules[b][a] : modules[a][b] }
                var run = 1
                for b in 1..<size {
                    if line[b] == line[b - 1] { run += 1 } else { run = 1 }
                    if run == 5 { total += 3 } else if run > 5 { total += 1 }
                }
                for start in 0...(size - 11) where finderLike.contains(where: { Array(line[start..<(start + 11)]) == $0 }) { total += 40 }
            }
        }
        for y in 0..<(size - 1) {
            for x in 0..<(size - 1) where modules[y][x] == modules[y][x + 1] && modules[y][x] == modules[y + 1][x] && modules[y][x] == modules[y + 1][x + 1] {
                total += 3
            }
        }
        let dark = modules.reduce(0) { $0 + $1.filter { $0 }.count }
        total += abs(dark * 20 - size * size * 10) / (size * size) * 10
        return total
    }
}
