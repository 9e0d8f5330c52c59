import Foundation
import ShutterPipeImaging
import ShutterPipeKit

extension FilesSink {
    /// The bytes to write for `file`, tagged in memory before the first write (tagging
    /// costs no extra write): with the `exif:` block's metadata, or, without one, a
    /// sequence frame's place as XMP; the XMP sidecar to write beside it, if any; and the
    /// warnings for the answer.
    func tagged(_ file: CapturedFile, values: TemplateValues, context: ShotContext) -> (chunks: [Data], sidecar: Data?, warnings: [String]) {
        var warnings: [String] = []
        var chunks = [file.data]
        var sidecar: Data?
        if options.exif == nil, let frame = context.sequence, FileKind.of(file.name) == .jpeg {
            // A sequence's frame knows its place even without an `exif:` block: XMP.
            var metadata = PhotoMetadata()
            metadata.sequence = frame
            let tagged = MetadataTagger.tag(file.data, named: file.name, with: metadata)
            if tagged.needsSidecar {
                log.debug("\(file.name): its place in sequence '\(frame.name)' not written (\(tagged.method)); the photo is stored as the camera made it")
            } else {
                chunks = tagged.chunks
            }
            for note in tagged.notes { log.debug("\(file.name): \(note)") }
        }
        if let exif = options.exif {
            let (metadata, problems) = exif.metadata(values, context: context)
            let tagged = MetadataTagger.tag(file.data, named: file.name, with: metadata)
            chunks = tagged.chunks
            warnings += problems + tagged.warnings
            for note in tagged.notes { log.warning(note) }
            if options.sidecars == .always || (options.sidecars == .auto && tagged.needsSidecar) {
                sidecar = PhotoXMP.make(metadata, wrapped: false)
            } else if tagged.needsSidecar {
                log.warning("\(file.name): metadata not written (\(tagged.method)); set 'sidecars: auto' to keep it in a sidecar")
            }
        }
        return (chunks, sidecar, warnings)
    }
}
