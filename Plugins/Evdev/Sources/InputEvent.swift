import Foundation

/// One `struct input_event` as the kernel writes it on x86_64 (24 bytes): a timestamp,
/// type, code and value.
public struct InputEvent: Sendable, Equatable {
    /// The size of one record.
    public static let size = 24

    /// The kernel's timestamp, in microseconds (CLOCK_MONOTONIC once the reader asked for it).
    public var time: Int64
    public var type: UInt16
    public var code: UInt16
    public var value: Int32

    public static let synchronization: UInt16 = 0x00  // EV_SYN
    public static let key: UInt16 = 0x01              // EV_KEY
    public static let miscellaneous: UInt16 = 0x04    // EV_MSC
    public static let report: UInt16 = 0              // SYN_REPORT
    public static let dropped: UInt16 = 3             // SYN_DROPPED

    public init(time: Int64, type: UInt16, code: UInt16, value: Int32) {
        self.time = time
        self.type = type
        self.code = code
        self.value = value
    }

    /// Decodes one record.
    public init?(_ bytes: Data) {
        guard bytes.count >= Self.size else { return nil }
        let b = [UInt8](bytes.prefix(Self.size))
        func int64(_ at: Int) -> Int64 { (0..<8).reduce(Int64(0)) { $0 | Int64(b[at + $1]) << (8 * Int64($1)) } }
        time = int64(0) * 1_000_000 + int64(8)
        type = UInt16(b[16]) | UInt16(b[17]) << 8
        code = UInt16(b[18]) | UInt16(b[19]) << 8
        value = Int32(bitPattern: UInt32(b[20]) | UInt32(b[21]) << 8 | UInt32(b[22]) << 16 | UInt32(b[23]) << 24)
    }

    /// Encodes the record, as a test feeds a fake device.
    public var bytes: Data {
        var out = Data()
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) } }
        append(time / 1_000_000)
        append(time % 1_000_000)
        append(type)
        append(code)
        append(value)
        return out
    }
}

/// Key names from `<linux/input-event-codes.h>` for the devices shutterpipe is used with:
/// selfie remotes, presenters, pedals, and BlueZ's AVRCP keys.
public enum KeyNames {
    public static let codes: [String: UInt16] = [
        "KEY_ESC": 1, "KEY_ENTER": 28, "KEY_B": 48, "KEY_DOT": 52, "KEY_SPACE": 57, "KEY_F5": 63,
        "KEY_PAGEUP": 104, "KEY_LEFT": 105, "KEY_RIGHT": 106, "KEY_PAGEDOWN": 109, "KEY_MUTE": 113,
        "KEY_VOLUMEDOWN": 114, "KEY_VOLUMEUP": 115, "KEY_NEXTSONG": 163, "KEY_PLAYPAUSE": 164,
        "KEY_PREVIOUSSONG": 165, "KEY_STOPCD": 166, "KEY_PLAYCD": 200, "KEY_PAUSECD": 201, "KEY_CAMERA": 212,
        "BTN_LEFT": 272, "BTN_RIGHT": 273, "BTN_0": 256, "BTN_1": 257, "BTN_2": 258,
    ]

    /// The code of a name (`KEY_VOLUMEUP`, or a number such as `115`).
    public static func code(_ name: String) -> UInt16? {
        codes[name.uppercased()] ?? UInt16(name)
    }

    /// The name of a code, or its number.
    public static func name(_ code: UInt16) -> String {
        codes.first { $0.value == code }?.key ?? String(code)
    }
}
