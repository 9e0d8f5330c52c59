import Foundation
import ShutterPipeSupport

/// Our metadata as an XMP packet with the standard `dc:`, `xmp:`, `photoshop:` and
/// `exif:` properties: embedded in a JPEG (XMP APP1) or written as a sidecar.
enum XMPPacket {
    /// The packet's bytes (UTF-8). `wrapped` adds the `<?xpacket?>` wrapper JPEG
    /// embedding expects.
    static func make(_ metadata: PhotoMetadata, wrapped: Bool) -> Data {
        var attributes: [String] = []
        var elements: [String] = []
        if let time = metadata.captureTime {
            let stamp = iso8601(time, metadata.timeZone)
            attributes += ["xmp:CreateDate=\"\(stamp)\"", "photoshop:DateCreated=\"\(stamp)\"", "exif:DateTimeOriginal=\"\(stamp)\""]
        }
        if let software = metadata.software { attributes.append("xmp:CreatorTool=\"\(escape(software))\"") }
        if let id = metadata.imageUniqueID { attributes.append("exif:ImageUniqueID=\"\(escape(id))\"") }
        if let job = metadata.jobIdentifier { attributes.append("photoshop:TransmissionReference=\"\(escape(job))\"") }
        if let frame = metadata.sequence {
            // The frame's place in its sequence: what a stacking or HDR tool groups by.
            attributes += ["shutterpipe:Sequence=\"\(escape(frame.name))\"", "shutterpipe:SequenceKind=\"\(escape(frame.kind))\"",
                           "shutterpipe:Frame=\"\(frame.index)\"", "shutterpipe:Frames=\"\(frame.count)\""]
            if let setting = frame.setting { attributes.append("shutterpipe:SequenceSetting=\"\(escape(setting))\"") }
            if let value = frame.value { attributes.append("shutterpipe:SequenceValue=\"\(escape(value))\"") }
            if let ev = frame.ev { attributes.append("shutterpipe:ExposureOffset=\"\(ev)\"") }
        }
        if let gps = metadata.gps {
            attributes.append("exif:GPSVersionID=\"2.3.0.0\"")
            attributes.append("exif:GPSLatitude=\"\(coordinate(gps.latitude, positive: "N", negative: "S"))\"")
            attributes.append("exif:GPSLongitude=\"\(coordinate(gps.longitude, positive: "E", negative: "W"))\"")
            if let altitude = gps.altitude {
                attributes.append("exif:GPSAltitudeRef=\"\(altitude < 0 ? 1 : 0)\"")
                attributes.append("exif:GPSAltitude=\"\(Int((abs(altitude) * 100).rounded()))/100\"")
            }
        }
        if let artist = metadata.artist { elements.append("<dc:creator><rdf:Seq><rdf:li>\(escape(artist))</rdf:li></rdf:Seq></dc:creator>") }
        if let rights = metadata.copyright { elements.append(alternative("dc:rights", rights)) }
        if let description = metadata.imageDescription { elements.append(alternative("dc:description", description)) }
        if let comment = metadata.userComment { elements.append(alternative("exif:UserComment", comment)) }
        if !metadata.keywords.isEmpty {
            elements.append("<dc:subject><rdf:Bag>" + metadata.keywords.map { "<rdf:li>\(escape($0))</rdf:li>" }.joined() + "</rdf:Bag></dc:subject>")
        }
        var text = ""
        if wrapped { text += "<?xpacket begin=\"\u{FEFF}\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n" }
        text += """
        <x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="shutterpipe">
         <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
          <rdf:Description rdf:about=""
            xmlns:dc="http://purl.org/dc/elements/1.1/"
            xmlns:xmp="http://ns.adobe.com/xap/1.0/"
            xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/"
            xmlns:exif="http://ns.adobe.com/exif/1.0/"
            xmlns:shutterpipe="\(sequenceNamespace)"
        """
        for attribute in attributes { text += "\n    " + attribute }
        text += ">\n"
        for element in elements { text += "   " + element + "\n" }
        text += "  </rdf:Description>\n </rdf:RDF>\n</x:xmpmeta>\n"
        if wrapped { text += "<?xpacket end=\"w\"?>" }
        return Data(text.utf8)
    }

    /// The namespace of a sequence frame's place (`shutterpipe:Sequence`, `Frame`, …).
    static let sequenceNamespace = "https://shutterpipe.org/ns/sequence/1.0/"

    private static func alternative(_ name: String, _ value: String) -> String {
        "<\(name)><rdf:Alt><rdf:li xml:lang=\"x-default\">\(escape(value))</rdf:li></rdf:Alt></\(name)>"
    }

    /// XML text and attribute escaping; what XML forbids is dropped (``XMLText``).
    static func escape(_ text: String) -> String {
        XMLText.escaped(text)
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
