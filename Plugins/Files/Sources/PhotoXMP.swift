import Foundation
import ShutterPipeImaging
import ShutterPipeSupport

/// Our metadata as XMP properties with the standard `dc:`, `xmp:`, `photoshop:` and
/// `exif:` names, written by the imaging module's one XMP writer (``XMPPacket``):
/// embedded in a JPEG (XMP APP1) or written as a sidecar.
enum PhotoXMP {
    /// The packet's bytes (UTF-8). `wrapped` adds the `<?xpacket?>` wrapper JPEG
    /// embedding expects.
    static func make(_ metadata: PhotoMetadata, wrapped: Bool) -> Data {
        Data(XMPPacket(properties(metadata), declaring: [.dc, .xmp, .photoshop, .exif, .shutterpipeSequence]).text(wrapped: wrapped).utf8)
    }

    static func properties(_ metadata: PhotoMetadata) -> [XMPPacket.Property] {
        typealias P = XMPPacket.Property
        var properties: [P] = []
        if let time = metadata.captureTime {
            let stamp = iso8601(time, metadata.timeZone)
            properties += [P(.xmp, "CreateDate", .text(stamp)), P(.photoshop, "DateCreated", .text(stamp)), P(.exif, "DateTimeOriginal", .text(stamp))]
        }
        if let software = metadata.software { properties.append(P(.xmp, "CreatorTool", .text(software))) }
        if let id = metadata.imageUniqueID { properties.append(P(.exif, "ImageUniqueID", .text(id))) }
        if let job = metadata.jobIdentifier { properties.append(P(.photoshop, "TransmissionReference", .text(job))) }
        if let frame = metadata.sequence {
            // The frame's place in its sequence: what a stacking or HDR tool groups by.
            let sequence = XMPNamespace.shutterpipeSequence
            properties += [P(sequence, "Sequence", .text(frame.name)), P(sequence, "SequenceKind", .text(frame.kind)),
                           P(sequence, "Frame", .text(String(frame.index))), P(sequence, "Frames", .text(String(frame.count)))]
            if let setting = frame.setting { properties.append(P(sequence, "SequenceSetting", .text(setting))) }
            if let value = frame.value { properties.append(P(sequence, "SequenceValue", .text(value))) }
            if let ev = frame.ev { properties.append(P(sequence, "ExposureOffset", .text("\(ev)"))) }
        }
        if let gps = metadata.gps {
            properties.append(P(.exif, "GPSVersionID", .text("2.3.0.0")))
            properties.append(P(.exif, "GPSLatitude", .text(coordinate(gps.latitude, positive: "N", negative: "S"))))
            properties.append(P(.exif, "GPSLongitude", .text(coordinate(gps.longitude, positive: "E", negative: "W"))))
            if let altitude = gps.altitude {
                properties.append(P(.exif, "GPSAltitudeRef", .text(altitude < 0 ? "1" : "0")))
                properties.append(P(.exif, "GPSAltitude", .text("\(Int((abs(altitude) * 100).rounded()))/100")))
            }
        }
        if let artist = metadata.artist { properties.append(P(.dc, "creator", .sequence([artist]))) }
        if let rights = metadata.copyright { properties.append(P(.dc, "rights", .alternative(rights))) }
        if let description = metadata.imageDescription { properties.append(P(.dc, "description", .alternative(description))) }
        if let comment = metadata.userComment { properties.append(P(.exif, "UserComment", .alternative(comment))) }
        if !metadata.keywords.isEmpty { properties.append(P(.dc, "subject", .bag(metadata.keywords))) }
        return properties
    }

    /// XMP's GPS coordinate form: `52,31.2000N`.
    static func coordinate(_ value: Double, positive: String, negative: String) -> String {
        let magnitude = abs(value)
        let degrees = Int(magnitude)
        let minutes = (magnitude - Double(degrees)) * 60
        return String(format: "%d,%.6f%@", degrees, minutes, value < 0 ? negative : positive)
    }

    static func iso8601(_ date: Date, _ zone: TimeZone) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS"
        return formatter.string(from: date) + ExifEncoder.offsetText(zone, at: date)
    }
}
