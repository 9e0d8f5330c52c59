import Foundation

/// The EXIF a camera writes into each photo, made for the virtual camera's synthesised
/// JPEGs from its properties at the shot: Make and Model, ExposureTime, FNumber, ISO, and
/// with `--lens` the SubjectDistance the lens was focused at. exiftool reads it as it
/// reads a body's; a bracket's frames show the exposure each was taken with.
enum CameraExif {
    /// An APP1 "Exif" segment (marker included).
    /// A `measured` exposure time (a bulb's) is written to the millisecond.
    static func segment(exposureTime: Double, measured: Bool = false, fNumber: Double, iso: UInt32, focusMillimetres: UInt32?) -> Data {
        var tiff = Data()
        func u16(_ value: Int) { tiff.append(UInt8(value & 0xFF)); tiff.append(UInt8((value >> 8) & 0xFF)) }
        func u32(_ value: Int) { u16(value & 0xFFFF); u16((value >> 16) & 0xFFFF) }
        let make = Array("shutterpipe\0".utf8), model = Array("PTP/IP Camera\0".utf8)
        let exposure = measured ? (Int((exposureTime * 1000).rounded()), 1000) : rational(exposureTime), aperture = (Int((fNumber * 10).rounded()), 10)
        // In tag order, as an IFD must be: ExposureTime, FNumber, ISO, ExifVersion "0230",
        // SubjectDistance (m), ColorSpace sRGB.
        var exifEntries: [(tag: Int, type: Int, count: Int, value: [Int])] = [
            (0x829A, 5, 1, [exposure.0, exposure.1]), (0x829D, 5, 1, [aperture.0, aperture.1]), (0x8827, 3, 1, [Int(iso)]),
            (0x9000, 7, 4, [0x30, 0x32, 0x33, 0x30]),
        ]
        if let focusMillimetres { exifEntries.append((0x9206, 5, 1, [Int(focusMillimetres), 1000])) }
        exifEntries.append((0xA001, 3, 1, [1]))
        // Layout: header (8), IFD0 (2 + 3·12 + 4), Make, Model, Exif IFD, its rationals.
        let ifd0Size = 2 + 3 * 12 + 4
        let makeAt = 8 + ifd0Size, modelAt = makeAt + make.count
        let exifAt = modelAt + model.count + (modelAt + model.count) % 2
        let exifSize = 2 + exifEntries.count * 12 + 4
        var dataAt = exifAt + exifSize
        tiff.append(contentsOf: Array("II".utf8)); u16(42); u32(8)
        u16(3)
        u16(0x010F); u16(2); u32(make.count); u32(makeAt)
        u16(0x0110); u16(2); u32(model.count); u32(modelAt)
        u16(0x8769); u16(4); u32(1); u32(exifAt)
        u32(0)
        tiff.append(contentsOf: make); tiff.append(contentsOf: model)
        while tiff.count < exifAt { tiff.append(0) }
        u16(exifEntries.count)
        var rationals: [Int] = []
        for entry in exifEntries {
            u16(entry.tag); u16(entry.type); u32(entry.count)
            if entry.type == 5 {
                u32(dataAt); dataAt += 8
                rationals += entry.value
            } else if entry.type == 7 {
                for byte in entry.value { tiff.append(UInt8(byte)) }
            } else {
                u16(entry.value[0]); u16(0)
            }
        }
        u32(0)
        for value in rationals { u32(value) }
        var segment = Data([0xFF, 0xE1])
        let length = 2 + 6 + tiff.count
        segment.append(UInt8(length >> 8)); segment.append(UInt8(length & 0xFF))
        segment.append(contentsOf: Array("Exif".utf8) + [0, 0])
        segment.append(tiff)
        return segment
    }

    /// Seconds as a camera writes them: 1/N below a second, else N/1 (tenths above).
    private static func rational(_ seconds: Double) -> (Int, Int) {
        guard seconds > 0 else { return (0, 1) }
        if seconds < 1 { return (1, Int((1 / seconds).rounded())) }
        return (Int((seconds * 10).rounded()), 10)
    }
}
