import Foundation
import ShutterPipeKit

/// Changes a shot's marks the one way both `shutterpipe shots` and a running session
/// (``SessionCatalogue``) do: each sidecar first (the truth, merged with what is there,
/// written durably), the JPEGs themselves when `marksInJPEG` is on, then the catalogue.
public enum CatalogueMarker {
    /// What a change did.
    public struct Outcome: Sendable {
        /// The shot as the catalogue holds it afterwards.
        public var shot: CatalogueShot
        /// The files written: sidecars, and JPEGs with `marksInJPEG`.
        public var written: [String]
    }

    /// Applies `changes` to `frames` of shot `id` of `catalogue` (every frame: the whole
    /// shot). Each frame's files get that frame's marks; keywords are the shot's, and go
    /// to every file's sidecar.
    public static func mark(_ id: Int, frames selection: Catalogue.Frames = .all, _ changes: [ShotMarkChange], in catalogue: Catalogue) throws -> Outcome {
        guard let shot = try catalogue.shot(id) else {
            throw ShutterError(.invalidConfiguration, "no shot \(id) in the catalogue '\(catalogue.path)'", fix: "'shutterpipe shots' lists the ids")
        }
        for change in changes {
            if case .rating(let value) = change, !(0...5).contains(value) {
                throw ShutterError(.invalidConfiguration, "rating \(value) is out of range", fix: "give a rating from 0 (none) to 5")
            }
        }
        let targets: [CatalogueFrame]
        switch selection {
        case .all:
            targets = shot.frames
        case .camera(let camera):
            guard let frame = shot.frame(camera) else {
                let cameras = shot.frames.compactMap(\.camera)
                throw ShutterError(.invalidConfiguration, "shot \(id) has no frame of camera '\(camera ?? "")'" + (cameras.isEmpty ? ": it is of one camera" : "; its frames are \(cameras.joined(separator: ", "))"),
                                   fix: cameras.isEmpty ? "mark it without a camera" : "give one of its cameras, or none to mark the whole shot")
            }
            targets = [frame]
        }
        let adding = changes.flatMap { change -> [String] in if case .addKeywords(let words) = change { return words }; return [] }
        let removing = changes.flatMap { change -> [String] in if case .removeKeywords(let words) = change { return words }; return [] }
        var touchesMarks = false
        for change in changes {
            switch change {
            case .rating, .label, .pick: touchesMarks = true
            case .addKeywords, .removeKeywords: break
            @unknown default:
                throw ShutterError(.invalidConfiguration, "this catalogue does not know the mark change \(change): it is newer than this shutterpipe", fix: "update shutterpipe")
            }
        }
        var written: [String] = []
        let naming = catalogue.sidecarNaming()
        let intoJPEG = (try? catalogue.setting("marksInJPEG")) != "0"  // on unless a session turned it off
        if touchesMarks {
            for frame in targets {
                let marks = changes.reduce(frame.marks) { $0.applying($1) }
                let files = shot.files(of: frame.camera).filter { !$0.missing }
                for file in files {
                    for sidecar in sidecars(of: file, naming: naming) where !written.contains(sidecar) {
                        try XMPSidecar.write(marks, to: sidecar)
                        written.append(sidecar)
                    }
                }
                if intoJPEG {
                    for file in files where file.kind == .jpeg {
                        try XMPSidecar.writeIntoJPEG(marks, path: file.path)
                        try catalogue.refreshFile(file.path)
                        written.append(file.path)
                    }
                }
                _ = try catalogue.mark(id, frames: .camera(frame.camera), rating: marks.rating, label: .some(marks.label), pick: marks.pick)
            }
        }
        if !adding.isEmpty || !removing.isEmpty {
            for file in shot.files where !file.missing {
                for sidecar in sidecars(of: file, naming: naming) {
                    _ = try XMPSidecar.changeKeywords(adding: adding, removing: removing, in: sidecar)
                    if !written.contains(sidecar) { written.append(sidecar) }
                }
            }
            var keywords = shot.keywords
            keywords += adding.filter { !keywords.contains($0) }
            keywords.removeAll { removing.contains($0) }
            try catalogue.setKeywords(id, keywords)
        }
        guard let after = try catalogue.shot(id) else {
            throw ShutterError(.unexpected, "shot \(id) left the catalogue '\(catalogue.path)' while it was marked")
        }
        return Outcome(shot: after, written: written)
    }

    /// The sidecars a file's marks go to, so that every editor finds them: the configured
    /// naming's, and for a RAW both namings, kept in step: `IMG_1.CR2.xmp` (darktable,
    /// digiKam) and `IMG_1.xmp` (Lightroom, Capture One, Bridge). A JPEG's marks also go
    /// inside it (`marksInJPEG`, on by default), where Lightroom reads them.
    static func sidecars(of file: CatalogueFile, naming: SidecarNaming) -> [String] {
        guard file.kind == .raw else { return [naming.sidecar(of: file.path)] }
        return [SidecarNaming.append.sidecar(of: file.path), SidecarNaming.replace.sidecar(of: file.path)]
    }
}
