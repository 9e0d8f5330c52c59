#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// Ratings and labels inside a JPEG, for Lightroom, which reads a JPEG's marks only from
/// the XMP in the file (opt-in: `catalogue.marksInJPEG`; docs/catalogue.md).
///
/// The photo is never edited in place: a new file is written beside it with the XMP
/// segment merged (or added after the EXIF one), checked to hold the very same image data
/// from its start of scan on, fsynced, and renamed over the photo; then the folder is
/// fsynced. A crash leaves the old photo or the new one, whole.
enum JPEGMarks {
    static let xmpIdentifier = JPEGSegments.xmpHeader

    static func write(_ marks: ShotMarks, into path: String) throws(SidecarError) {
        // Never through a link: a photo swapped for a link to another private JPEG would
        // otherwise come back as a copy of it, marks merged, under the photo's name.
        guard let data = read(path) else { throw SidecarError(path: path, reason: "cannot read it, or it is not a regular file (a link is never followed)") }
        let bytes = [UInt8](data)
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { throw SidecarError(path: path, reason: "not a JPEG; left as it is") }
        let walk = JPEGSegments(bytes)
        if case .damaged = walk.end { throw SidecarError(path: path, reason: "its segments are damaged; left as it is") }
        guard let index = walk.scanStart else { throw SidecarError(path: path, reason: "no image data found; left as it is") }
        let existing = walk.first(0xE1, startingWith: xmpIdentifier, in: bytes)
        var packet: String
        if let existing {
            guard let text = String(bytes: bytes[(existing.payload.lowerBound + xmpIdentifier.count)..<existing.range.upperBound], encoding: .utf8) else {
                throw SidecarError(path: path, reason: "its XMP is not UTF-8; left as it is")
            }
            packet = text
        } else {
            packet = "<?xpacket begin=\"\u{FEFF}\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n" + XMPSidecar.emptyPacket + "<?xpacket end=\"w\"?>"
        }
        packet = try XMPSidecar.merge(marks, into: packet, path: path)
        let payload = xmpIdentifier + Array(packet.utf8)
        guard payload.count + 2 <= 0xFFFF else { throw SidecarError(path: path, reason: "its XMP would outgrow a JPEG segment; left as it is") }
        let segment: [UInt8] = [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        var output: [UInt8]
        if let existing {
            output = Array(bytes[..<existing.range.lowerBound]) + segment + Array(bytes[existing.range.upperBound...])
        } else {
            // After SOI and the APP0 (JFIF) / APP1 (EXIF) segments that lead the file.
            let leading = walk.segments.prefix { $0.marker == 0xE0 || $0.marker == 0xE1 }.last?.range.upperBound ?? 2
            output = Array(bytes[..<leading]) + segment + Array(bytes[leading...])
        }
        guard output[(output.count - (bytes.count - index))...].elementsEqual(bytes[index...]) else {
            throw SidecarError(path: path, reason: "the image data would change; left as it is")
        }
        let folder = PathName.parent(path)
        let lock = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard lock >= 0 else { throw SidecarError(path: path, reason: String(cString: strerror(errno))) }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 && errno == EINTR {}
        // Still the file we read: another writer may have replaced it meanwhile.
        guard read(path) == data else {
            throw SidecarError(path: path, reason: "it changed while being marked; try again")
        }
        var attributes = stat()
        let mode = lstat(path, &attributes) == 0 ? attributes.st_mode & 0o7777 : 0o644
        try XMPSidecar.replaceDurably(path, with: Data(output), mode: mode)
    }
}

extension JPEGMarks {
    /// The photo's bytes, opened without following a link and read through that descriptor.
    static func read(_ path: String) -> Data? {
        try? UntrustedFile.contents(of: path, limits: .init(bytes: 2_000_000_000, links: Int.max))
    }
}

extension XMPSidecar {
    /// The marks into the XMP inside the JPEG at `path` (``JPEGMarks``).
    public static func writeIntoJPEG(_ marks: ShotMarks, path: String) throws(SidecarError) {
        try JPEGMarks.write(marks, into: path)
    }
}
