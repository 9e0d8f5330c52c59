import Foundation
import ShutterPipeImaging
import ShutterPipeKit

/// The metadata shutterpipe writes into one photo, after templates are rendered.
struct PhotoMetadata: Equatable {
    var artist: String?
    var copyright: String?
    var imageDescription: String?
    var software: String?
    var userComment: String?
    var imageUniqueID: String?
    var keywords: [String] = []
    /// The session label (``ShotContext/label``), as IPTC's Job Identifier
    /// (`photoshop:TransmissionReference` in XMP).
    var jobIdentifier: String?
    /// The capture time to write, when the policy asks for it.
    var captureTime: Date?
    var timeZone: TimeZone = .current
    /// Whether the capture time replaces one the camera wrote.
    var replaceCameraTime = false
    var gps: GPSLocation?
    /// The frame's place in a sequence (XMP `shutterpipe:` properties).
    var sequence: SequenceFrame?

    /// Whether any text needs more than ASCII.
    var needsUnicode: Bool {
        ([artist, copyright, imageDescription, software, userComment, jobIdentifier].compactMap { $0 } + keywords)
            .contains { !$0.unicodeScalars.allSatisfy(\.isASCII) }
    }

    var isEmpty: Bool {
        artist == nil && copyright == nil && imageDescription == nil && software == nil && userComment == nil
            && imageUniqueID == nil && keywords.isEmpty && captureTime == nil && gps == nil && jobIdentifier == nil && sequence == nil
    }
}

/// A fixed location, such as the studio's.
struct GPSLocation: Equatable, Sendable {
    var latitude: Double
    var longitude: Double
    var altitude: Double?
}

/// The EXIF tags the `exif:` block can set, with where they live and how they are
/// encoded. Tag numbers are the EXIF 2.32 ones; a test checks them against libexif's
/// tag table.
enum ExifTagName: String, CaseIterable, Sendable {
    case artist = "Artist"
    case copyright = "Copyright"
    case imageDescription = "ImageDescription"
    case software = "Software"
    case userComment = "UserComment"
    case imageUniqueID = "ImageUniqueID"
    case keywords = "Keywords"
}

/// EXIF tag numbers shutterpipe writes.
enum TagNumber {
    static let imageDescription: UInt16 = 0x010E
    static let software: UInt16 = 0x0131
    static let artist: UInt16 = 0x013B
    static let copyright: UInt16 = 0x8298
    static let xpTitle: UInt16 = 0x9C9B
    static let xpComment: UInt16 = 0x9C9C
    static let xpAuthor: UInt16 = 0x9C9D
    static let xpKeywords: UInt16 = 0x9C9E
    static let dateTimeOriginal: UInt16 = 0x9003
    static let offsetTimeOriginal: UInt16 = 0x9011
    static let userComment: UInt16 = 0x9286
    static let subSecTimeOriginal: UInt16 = 0x9291
    static let imageUniqueID: UInt16 = 0xA420
}

/// Encodes ``PhotoMetadata`` as IFD entries for one block.
struct ExifEncoder {
    let editor: TIFFEditor

    /// Entries for IFD0.
    func ifd0Entries(_ metadata: PhotoMetadata) -> [TIFFEditor.NewEntry] {
        var entries: [TIFFEditor.NewEntry] = []
        if let value = metadata.imageDescription { entries.append(ascii(TagNumber.imageDescription, value)) }
        if let value = metadata.software { entries.append(ascii(TagNumber.software, value)) }
        if let value = metadata.artist { entries.append(ascii(TagNumber.artist, value)) }
        if let value = metadata.copyright { entries.append(ascii(TagNumber.copyright, value)) }
        // The XP tags are UTF-16: readers that take ASCII tags as Latin-1 show them right.
        if metadata.needsUnicode {
            if let value = metadata.imageDescription { entries.append(xp(TagNumber.xpTitle, value)) }
            if let value = metadata.userComment { entries.append(xp(TagNumber.xpComment, value)) }
            if let value = metadata.artist { entries.append(xp(TagNumber.xpAuthor, value)) }
        }
        if !metadata.keywords.isEmpty { entries.append(xp(TagNumber.xpKeywords, metadata.keywords.joined(separator: ";"))) }
        return entries
    }

    /// Entries for the EXIF sub-IFD, and the names of tags left out because the block's
    /// ExifVersion predates them (writing them would make the file invalid; their values
    /// go to XMP instead).
    func exifEntries(_ metadata: PhotoMetadata) -> (entries: [TIFFEditor.NewEntry], leftOut: [String]) {
        var entries: [TIFFEditor.NewEntry] = []
        var leftOut: [String] = []
        let version = editor.exifVersion
        func allowed(_ name: String, since required: Int) -> Bool {
            guard let version, version < required else { return true }
            leftOut.append(name)
            return false
        }
        if let time = metadata.captureTime, metadata.replaceCameraTime || !editor.exifContains(TagNumber.dateTimeOriginal) {
            let parts = Self.timeParts(time, metadata.timeZone)
            entries.append(ascii(TagNumber.dateTimeOriginal, parts.dateTime))
            entries.append(ascii(TagNumber.subSecTimeOriginal, parts.subSeconds))
            if allowed("OffsetTimeOriginal", since: 231) { entries.append(ascii(TagNumber.offsetTimeOriginal, parts.offset)) }
        }
        if let value = metadata.userComment { entries.append(userComment(value)) }
        if let value = metadata.imageUniqueID, allowed("ImageUniqueID", since: 220) {
            entries.append(ascii(TagNumber.imageUniqueID, value))
        }
        return (entries, leftOut)
    }

    /// Entries for a new GPS IFD.
    func gpsEntries(_ location: GPSLocation?) -> [TIFFEditor.NewEntry] {
        guard let location else { return [] }
        var entries: [TIFFEditor.NewEntry] = [
            TIFFEditor.NewEntry(tag: 0x0000, type: 1, count: 4, value: Data([2, 3, 0, 0])),
            ascii(0x0001, location.latitude >= 0 ? "N" : "S"),
            rationals(0x0002, Self.degreesMinutesSeconds(abs(location.latitude))),
            ascii(0x0003, location.longitude >= 0 ? "E" : "W"),
            rationals(0x0004, Self.degreesMinutesSeconds(abs(location.longitude))),
        ]
        if let altitude = location.altitude {
            entries.append(TIFFEditor.NewEntry(tag: 0x0005, type: 1, count: 1, value: Data([altitude < 0 ? 1 : 0])))
            entries.append(rationals(0x0006, [(UInt32((abs(altitude) * 100).rounded()), 100)]))
        }
        return entries
    }

    /// ASCII (UTF-8 bytes, as exiftool and exiv2 write and read), NUL-terminated.
    func ascii(_ tag: UInt16, _ text: String) -> TIFFEditor.NewEntry {
        var bytes = Data(text.utf8.filter { $0 != 0 })
        bytes.append(0)
        return TIFFEditor.NewEntry(tag: tag, type: 2, count: UInt32(bytes.count), value: bytes)
    }

    /// The XP tags: BYTE, UTF-16LE with a 2-byte NUL, little-endian whatever the block.
    func xp(_ tag: UInt16, _ text: String) -> TIFFEditor.NewEntry {
        var bytes = Data()
        for unit in text.utf16 where unit != 0 { bytes.append(contentsOf: [UInt8(unit & 0xFF), UInt8(unit >> 8)]) }
        bytes.append(contentsOf: [0, 0])
        return TIFFEditor.NewEntry(tag: tag, type: 1, count: UInt32(bytes.count), value: bytes)
    }

    /// UserComment: an 8-byte character code, then ASCII or UCS-2 in the block's order.
    func userComment(_ text: String) -> TIFFEditor.NewEntry {
        var bytes = Data()
        if text.unicodeScalars.allSatisfy(\.isASCII) {
            bytes.append(contentsOf: Array("ASCII".utf8) + [0, 0, 0])
            bytes.append(contentsOf: text.utf8.filter { $0 != 0 })
        } else {
            bytes.append(contentsOf: Array("UNICODE".utf8) + [0])
            for unit in text.utf16 { bytes.append(contentsOf: editor.encode16(unit)) }
        }
        return TIFFEditor.NewEntry(tag: TagNumber.userComment, type: 7, count: UInt32(bytes.count), value: bytes)
    }

    func rationals(_ tag: UInt16, _ values: [(UInt32, UInt32)]) -> TIFFEditor.NewEntry {
        var bytes = Data()
        for (numerator, denominator) in values { bytes.append(contentsOf: editor.encode32(numerator) + editor.encode32(denominator)) }
        return TIFFEditor.NewEntry(tag: tag, type: 5, count: UInt32(values.count), value: bytes)
    }

    static func degreesMinutesSeconds(_ value: Double) -> [(UInt32, UInt32)] {
        let degrees = floor(value)
        let minutes = floor((value - degrees) * 60)
        let seconds = ((value - degrees) * 60 - minutes) * 60
        return [(UInt32(degrees), 1), (UInt32(minutes), 1), (UInt32((seconds * 1000).rounded()), 1000)]
    }

    /// `2026:12:01 14:30:05`, `345`, `+01:00`.
    static func timeParts(_ date: Date, _ zone: TimeZone) -> (dateTime: String, subSeconds: String, offset: String) {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        formatter.dateFormat = "yyyy:MM:dd HH:mm:ss"
        let milliseconds = Int((date.timeIntervalSince1970 * 1000).rounded(.down)) % 1000
        return (formatter.string(from: date), String(format: "%03d", milliseconds), offsetText(zone, at: date))
    }

    static func offsetText(_ zone: TimeZone, at date: Date) -> String {
        let seconds = zone.secondsFromGMT(for: date)
        let sign = seconds < 0 ? "-" : "+"
        return String(format: "%@%02d:%02d", sign, abs(seconds) / 3600, abs(seconds) % 3600 / 60)
    }
}
