#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeImaging
import ShutterPipeKit
import ShutterPipeSupport

/// Ratings and labels inside a JPEG, for Lightroom, which reads a JPEG's marks only from
/// the XMP in the file (opt-in: `catalogue.marksInJPEG`; docs/catalogue.md).
///
/// The photo is never edited in place: a new file is written beside it with the XMP
/// segment merged (or added after the EXIF one) by the one splice of a JPEG's header
/// (``JPEGLayout``, which keeps the image data from its start of scan on byte for byte),
/// fsynced, and renamed over the photo; then the folder is fsynced. A crash leaves the old
/// photo or the new one, whole.
enum JPEGMarks {
    static func write(_ marks: ShotMarks, into path: String) throws(SidecarError) {
        // Never through a link: a photo swapped for a link to another private JPEG would
        // otherwise come back as a copy of it, marks merged, under the photo's name.
        guard let data = read(path) else { throw SidecarError(path: path, reason: "cannot read it, or it is not a regular file (a link is never followed)") }
        let layout: JPEGLayout
        do { layout = try JPEGLayout(data) } catch { throw SidecarError(path: path, reason: "\(error.description); left as it is") }
        let existing = layout.segments.firstIndex { $0.marker == 0xE1 && layout.starts($0, with: JPEGLayout.xmpHeader) }
        var packet: String
        if let existing {
            let segment = layout.segments[existing]
            guard let text = String(data: layout.payload(of: segment).dropFirst(JPEGLayout.xmpHeader.count), encoding: .utf8) else {
                throw SidecarError(path: path, reason: "its XMP is not UTF-8; left as it is")
            }
            packet = text
        } else {
            packet = XMPPacket(declaring: [.xmp]).text(wrapped: true)
        }
        packet = try XMPSidecar.merge(marks, into: packet, path: path)
        // The one splice of a JPEG's header (``JPEGLayout``): the packet takes the place of
        // the old one, or goes after the EXIF (or the JFIF) segment; the image data from
        // its start of scan on is the original's, byte for byte, and an MPF index is moved
        // with what grew before the images it points at.
        let body = Data(packet.utf8)
        guard body.count <= JPEGLayout.maximumXMPBody else { throw SidecarError(path: path, reason: "its XMP would outgrow a JPEG segment; left as it is") }
        let spliced: SplicedJPEG
        do {
            if let existing {
                spliced = try layout.spliced(exif: nil, replacements: [existing: JPEGLayout.segment(0xE1, JPEGLayout.xmpHeader, body)])
            } else {
                spliced = try layout.spliced(exif: nil, xmp: body)
            }
        } catch { throw SidecarError(path: path, reason: "\(error.description); left as it is") }
        let output = spliced.fixingMPF(original: layout).joined
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
        try XMPSidecar.replaceDurably(path, with: output, mode: mode)
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
