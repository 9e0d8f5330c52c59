import Foundation
import ShutterPipeImaging

/// Puts ``PhotoMetadata`` into one file, never damaging what the camera wrote.
///
/// The order of preference:
/// 1. A JPEG with a sound EXIF block: append-only edit (``TIFFEditor``). Every camera
///    byte stays where it was; MakerNotes and thumbnails keep working.
/// 2. A JPEG without EXIF: a new block from libexif, then the same edit.
/// 3. Where that is not safe (malformed IFDs, a result over 64 KiB, a read-back that does
///    not match): the camera's EXIF is left byte-identical and our metadata goes into an
///    XMP APP1; if the JPEG already has XMP (which is kept byte-identical too), into a
///    sidecar.
/// 4. A damaged JPEG, or a format libexif cannot write (RAW, HEIF, PNG): stored exactly
///    as received, with a sidecar.
enum MetadataTagger {
    struct Result {
        enum Method: Equatable {
            case exifEdited, exifCreated, xmpOnly(reason: String), unchanged(reason: String)
        }
        /// The file to write, as chunks written one after the other.
        var chunks: [Data]
        var method: Method
        /// Whether our metadata is only in a sidecar (the file could not carry it).
        var needsSidecar: Bool
        /// For the user (in the answer's details).
        var warnings: [String] = []
        /// For the log.
        var notes: [String] = []
    }

    private struct Fallback: Error { var reason: String }

    static func tag(_ data: Data, named name: String, with metadata: PhotoMetadata) -> Result {
        guard JPEGLayout.looksLikeJPEG(data) else {
            return Result(chunks: [data], method: .unchanged(reason: "not a JPEG"), needsSidecar: true)
        }
        let layout: JPEGLayout
        do {
            layout = try JPEGLayout(data)
        } catch {
            return Result(chunks: [data], method: .unchanged(reason: error.description), needsSidecar: true,
                          warnings: ["camera JPEG \(name) is damaged (\(error.description)); stored as received, metadata in a sidecar"])
        }
        do {
            return try edit(layout, metadata: metadata)
        } catch let fallback as Fallback {
            let reason = fallback.reason
            guard !layout.hasXMP else {
                return Result(chunks: [data], method: .unchanged(reason: reason), needsSidecar: true,
                              notes: ["\(name): \(reason); camera EXIF and XMP kept as they are, metadata in a sidecar"])
            }
            let xmp = PhotoXMP.make(metadata, wrapped: true)
            do {
                let out = try layout.spliced(exif: nil, xmp: xmp).fixingMPF(original: layout)
                return Result(chunks: out.chunks, method: .xmpOnly(reason: reason), needsSidecar: false,
                              notes: ["\(name): \(reason); camera EXIF kept byte-identical, metadata written as XMP"])
            } catch {
                return Result(chunks: [data], method: .unchanged(reason: "\(reason); \(error)"), needsSidecar: true,
                              warnings: ["\(name): \(error); stored as received, metadata in a sidecar"])
            }
        } catch {
            return Result(chunks: [data], method: .unchanged(reason: "\(error)"), needsSidecar: true)
        }
    }

    private static func edit(_ layout: JPEGLayout, metadata: PhotoMetadata) throws -> Result {
        let created: Bool
        let tiff: Data
        if let segment = layout.exifSegments.first {
            tiff = layout.data.subdata(in: (segment.payload.lowerBound + JPEGLayout.exifHeader.count)..<segment.payload.upperBound)
            created = false
        } else {
            let size = layout.dimensions ?? (0, 0)
            guard let base = LibExif.baseBlock(width: size.width, height: size.height, resolution: layout.jfifResolution) else {
                throw Fallback(reason: "libexif could not build an EXIF block")
            }
            tiff = base
            created = true
        }
        let editor: TIFFEditor
        do { editor = try TIFFEditor(tiff) } catch { throw Fallback(reason: "camera EXIF is malformed (\(error.description))") }
        let encoder = ExifEncoder(editor: editor)
        let ifd0 = encoder.ifd0Entries(metadata)
        var (exif, leftOut) = encoder.exifEntries(metadata)
        if editor.exif == nil && !exif.isEmpty {
            // A new EXIF sub-IFD needs the tags EXIF requires of one; libexif knows them.
            let size = layout.dimensions ?? (0, 0)
            let required = LibExif.baseBlock(width: size.width, height: size.height, resolution: nil, order: editor.order)
                .flatMap { try? TIFFEditor($0) }?.exif?.entries.compactMap(TIFFEditor.NewEntry.init(inline:)) ?? []
            let ours = Set(exif.map(\.tag))
            exif = required.filter { !ours.contains($0.tag) } + exif
        }
        var notes: [String] = []
        var gps = encoder.gpsEntries(metadata.gps)
        if editor.gps != nil && !gps.isEmpty {
            gps = []
            notes.append("the camera wrote a GPS position; kept it instead of the configured one")
        }
        let edited = editor.appending(ifd0: ifd0, exif: exif, gps: gps)
        guard edited.count <= JPEGLayout.maximumExifBody else {
            throw Fallback(reason: "the EXIF block would exceed the 64 KiB JPEG limit")
        }
        let expected = ifd0.map { (LibExif.ifd0, $0) } + exif.map { (LibExif.exifIFD, $0) } + gps.map { (LibExif.gpsIFD, $0) }
        let read = LibExif.readBack(edited, tags: expected.map { ($0.0, $0.1.tag) })
        for ((_, entry), value) in zip(expected, read) where value != entry.value {
            throw Fallback(reason: "reading the edited EXIF back did not give tag 0x\(String(entry.tag, radix: 16))")
        }
        // XMP carries what EXIF cannot: Unicode text for every reader, and tags this
        // camera's ExifVersion predates. A camera's own XMP is never touched.
        let wantsXMP = metadata.needsUnicode || !leftOut.isEmpty || metadata.jobIdentifier != nil || metadata.sequence != nil
        let xmp = wantsXMP && !layout.hasXMP ? PhotoXMP.make(metadata, wrapped: true) : nil
        if !leftOut.isEmpty {
            notes.append("ExifVersion \(editor.exifVersion.map(String.init) ?? "?") predates \(leftOut.joined(separator: ", ")); "
                         + (xmp == nil ? "left out" : "written to XMP instead"))
        }
        let out: SplicedJPEG
        do { out = try layout.spliced(exif: edited, xmp: xmp).fixingMPF(original: layout) } catch { throw Fallback(reason: error.description) }
        return Result(chunks: out.chunks, method: created ? .exifCreated : .exifEdited, needsSidecar: false, notes: notes)
    }
}
