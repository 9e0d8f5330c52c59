import Foundation

/// Little-endian PTP encoding: integers, arrays and UCS-2 strings.
struct PTPWriter {
    private(set) var data = Data()

    mutating func u8(_ value: UInt8) { data.append(value) }
    mutating func u16(_ value: UInt16) { data.append(contentsOf: [UInt8(value & 0xFF), UInt8(value >> 8)]) }
    mutating func u32(_ value: UInt32) { for shift in stride(from: 0, to: 32, by: 8) { data.append(UInt8((value >> UInt32(shift)) & 0xFF)) } }
    mutating func u64(_ value: UInt64) { for shift in stride(from: 0, to: 64, by: 8) { data.append(UInt8((value >> UInt64(shift)) & 0xFF)) } }
    mutating func bytes(_ value: Data) { data.append(value) }

    /// A PTP string: a count of UCS-2 units including the terminator, the units, NUL.
    mutating func string(_ value: String) {
        guard !value.isEmpty else { u8(0); return }
        let units = Array(value.utf16.prefix(254))
        u8(UInt8(units.count + 1))
        for unit in units { u16(unit) }
        u16(0)
    }

    mutating func array16(_ values: [UInt16]) { u32(UInt32(values.count)); values.forEach { u16($0) } }
    mutating func array32(_ values: [UInt32]) { u32(UInt32(values.count)); values.forEach { u32($0) } }
}

/// The bytes of a data phase, in parts that share their storage (an image on the card is
/// its own header and the source file's mapped bytes): sent without joining them.
struct Payload: Sendable {
    private(set) var parts: [Data]

    init(_ parts: [Data] = []) { self.parts = parts.filter { !$0.isEmpty } }
    init(_ data: Data) { self.init([data]) }

    var count: Int { parts.reduce(0) { $0 + $1.count } }

    /// The bytes in `range`, joined (for GetPartialObject, and fuzzing).
    func bytes(in range: Range<Int>) -> Data {
        var result = Data(capacity: range.count)
        var offset = 0
        for part in parts {
            let here = offset..<(offset + part.count)
            let overlap = here.clamped(to: range)
            if !overlap.isEmpty {
                let start = part.startIndex + (overlap.lowerBound - offset)
                result.append(part[start..<(start + overlap.count)])
            }
            offset += part.count
        }
        return result
    }
}

/// Reads little-endian values from a payload, with bounds checks.
struct PTPReader {
    let data: Data
    var offset = 0

    init(_ data: Data) { self.data = data.startIndex == 0 ? data : Data(data) }

    var remaining: Int { data.count - offset }

    mutating func u16() -> UInt16? {
        guard remaining >= 2 else { return nil }
        defer { offset += 2 }
        return UInt16(data[offset]) | UInt16(data[offset + 1]) << 8
    }

    mutating func u32() -> UInt32? {
        guard remaining >= 4 else { return nil }
        defer { offset += 4 }
        return (0..<4).reduce(UInt32(0)) { $0 | UInt32(data[offset + $1]) << (8 * UInt32($1)) }
    }

    mutating func u64() -> UInt64? {
        guard remaining >= 8 else { return nil }
        defer { offset += 8 }
        return (0..<8).reduce(UInt64(0)) { $0 | UInt64(data[offset + $1]) << (8 * UInt64($1)) }
    }

    /// A PTP string: a count of UTF-16 units (with the terminating zero), then the units.
    mutating func string() -> String? {
        guard remaining >= 1 else { return nil }
        let count = Int(data[offset])
        offset += 1
        var units: [UInt16] = []
        for _ in 0..<count {
            guard let unit = u16() else { return nil }
            if unit != 0 { units.append(unit) }
        }
        return String(decoding: units, as: UTF16.self)
    }

    /// A property value for the log: a number, or a string in quotes.
    static func describe(_ data: Data) -> String {
        var reader = PTPReader(data)
        switch data.count {
        case 1: return String(data[data.startIndex])
        case 2: return String(reader.u16() ?? 0)
        case 4: return String(reader.u32() ?? 0)
        default: return reader.string().map { "'\($0)'" } ?? "\(data.count) bytes"
        }
    }

    mutating func rest() -> Data { defer { offset = data.count }; return data.subdata(in: offset..<data.count) }
}

/// PTP codes the virtual camera speaks.
enum PTP {
    enum Operation: UInt16 {
        case getDeviceInfo = 0x1001, openSession = 0x1002, closeSession = 0x1003, getStorageIDs = 0x1004
        case getStorageInfo = 0x1005, getNumObjects = 0x1006, getObjectHandles = 0x1007, getObjectInfo = 0x1008
        case getObject = 0x1009, getThumb = 0x100A, deleteObject = 0x100B, initiateCapture = 0x100E
        case getDevicePropDesc = 0x1014, getDevicePropValue = 0x1015, setDevicePropValue = 0x1016
        case getPartialObject = 0x101B
        case terminateOpenCapture = 0x1018, initiateOpenCapture = 0x101C  // bulb (--bulb)
        case getStreamInfo = 0x1024, getStream = 0x1025  // PTP 1.1 streams: live view
    }

    enum Response: UInt16, Error {
        case ok = 0x2001, generalError = 0x2002, sessionNotOpen = 0x2003, operationNotSupported = 0x2005
        case invalidObjectHandle = 0x2009, devicePropNotSupported = 0x200A, storeFull = 0x200C
        case invalidParameter = 0x201D, invalidDevicePropValue = 0x201C, sessionAlreadyOpen = 0x201E, accessDenied = 0x200F
        case noThumbnailPresent = 0x2010, deviceBusy = 0x2019
    }

    enum Event: UInt16 {
        case objectAdded = 0x4002, devicePropChanged = 0x4006, storeFull = 0x400A, captureComplete = 0x400D
    }

    enum Packet: UInt32 {
        case initCommandRequest = 1, initCommandAck = 2, initEventRequest = 3, initEventAck = 4, initFail = 5
        case commandRequest = 6, commandResponse = 7, event = 8, startData = 9, data = 10, cancel = 11, endData = 12
        case ping = 13, pong = 14
    }

    static let formatAssociation: UInt16 = 0x3001
    static let formatJPEG: UInt16 = 0x3801
    static let formatUndefined: UInt16 = 0x3000
    /// How Canon bodies file a CR2; libgphoto2 will not download an "Undefined" (0x3000) object.
    static let formatRaw: UInt16 = 0xB103
    static let storageID: UInt32 = 0x0001_0001
    /// The data type of a string property (STR).
    static let typeString: UInt16 = 0xFFFF
}
