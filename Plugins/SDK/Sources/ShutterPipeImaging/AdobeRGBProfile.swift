import Foundation

/// An ICC profile of the Adobe RGB (1998) colour space, made here: for the photos a
/// camera set to Adobe RGB writes without a profile, saying so only in EXIF (DCF's
/// ColorSpace "uncalibrated" with InteropIndex "R03"), which a browser would take for sRGB
/// (dull greens and cyans). ICC v2.1, a display profile: the primaries adapted to D50
/// (Bradford), the media white D65, a gamma of 563/256 on each channel.
public enum AdobeRGBProfile {
    public static let data: Data = make()

    private static func make() -> Data {
        func fixed(_ value: Double) -> Data { word(UInt32(bitPattern: Int32((value * 65_536).rounded()))) }
        func word(_ value: UInt32) -> Data { Data([UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]) }
        func xyz(_ x: Double, _ y: Double, _ z: Double) -> Data { Data("XYZ ".utf8) + word(0) + fixed(x) + fixed(y) + fixed(z) }
        let name = "Adobe RGB (1998) compatible"
        var description = Data("desc".utf8) + word(0) + word(UInt32(name.utf8.count + 1)) + Data(name.utf8) + Data([0])
        description += word(0) + word(0) + Data([0, 0, 0]) + Data(repeating: 0, count: 67)
        let copyright = Data("text".utf8) + word(0) + Data("No copyright, use freely".utf8) + Data([0])
        let curve = Data("curv".utf8) + word(0) + word(1) + Data([0x02, 0x33, 0, 0])  // u8Fixed8 563/256
        let tags: [(String, Data)] = [
            ("desc", description), ("cprt", copyright), ("wtpt", xyz(0.95045, 1, 1.08905)),
            ("rXYZ", xyz(0.60974, 0.31111, 0.01947)), ("gXYZ", xyz(0.20528, 0.62567, 0.06087)), ("bXYZ", xyz(0.14919, 0.06322, 0.74457)),
            ("rTRC", curve), ("gTRC", curve), ("bTRC", curve),
        ]
        // The tag table after the 128-byte header, then each tag's data, 4-byte aligned.
        var table = word(UInt32(tags.count)), body = Data()
        let start = 128 + 4 + tags.count * 12
        for (signature, data) in tags {
            table += Data(signature.utf8) + word(UInt32(start + body.count)) + word(UInt32(data.count))
            body += data + Data(repeating: 0, count: (4 - data.count % 4) % 4)
        }
        var header = word(UInt32(start + body.count)) + word(0) + word(0x0210_0000) + Data("mntrRGB XYZ ".utf8)
        header += Data([0x07, 0xEA, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0])  // 2026-01-01 00:00:00
        header += Data("acsp".utf8) + Data(repeating: 0, count: 4 * 4 + 8 + 4)  // platform, flags, maker, model, attributes, intent
        header += fixed(0.9642) + fixed(1) + fixed(0.8249)  // the PCS illuminant, D50
        header += Data(repeating: 0, count: 128 - header.count)
        return header + table + body
    }
}
