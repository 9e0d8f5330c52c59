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

    /// Applies `changes` to shot `id` of `catalogue`.
    public static func mark(_ id: Int, _ changes: [ShotMarkChange], in catalogue: Catalogue) throws -> Outcome {
        guard let shot = try catalogue.shot(id) else {
            throw ShutterError(.invalidConfiguration, "no shot \(id) in the catalogue '\(catalogue.path)'", fix: "'shutterpipe shots' lists the ids")
        }
        for change in changes {
            if case .rating(let value) = change, !(0...5).contains(value) {
                throw ShutterError(.invalidConfiguration, "rating \(value) is out of range", fix: "give a rating from 0 (none) to 5")
            }
        }
        let marks = changes.reduce(shot.marks) { $0.applying($1) }
        let adding = changes.flatMap { change -> [String] in if case .addKeywords(let words) = change { return words }; return [] }
        let removing = changes.flatMap { change -> [String] in if case .removeKeywords(let words) = change { return words }; return [] }
        let touchesMarks = changes.contains { change in
            switch change {
            case .rating, .label, .pick: return true
            case .addKeywords, .removeKeywords: return false
            }
        }
        var written: [String] = []
        for file in shot.files where !file.missing {
            for sidecar in sidecars(of: file, naming: catalogue.sidecarNaming()) where !written.contains(sidecar) {
                if touchesMarks { try XMPSidecar.write(marks, to: sidecar) }
                if !adding.isEmpty || !removing.isEmpty { _ = try XMPSidecar.changeKeywords(adding: adding, removing: removing, in: sidecar) }
                written.append(sidecar)
            }
        }
        if touchesMarks, (try? catalogue.setting("marksInJPEG")) != "0" {  // on unless a session turned it off
            for file in shot.files where !file.missing && file.kind == .jpeg {
                try XMPSidecar.writeIntoJPEG(marks, path: file.path)
                try catalogue.refreshFile(file.path)
                written.append(file.path)
            }
        }
        if touchesMarks { _ = try catalogue.mark(id, rating: marks.rating, label: .some(marks.label), pick: marks.pick) }
        if !adding.isEmpty || !removing.isEmpty {
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
    static func sidecars(of file: CatalogueFile, naming: XMPSidecar.Naming) -> [String] {
        guard file.kind == .raw else { return [naming.sidecar(of: file.path)] }
        return [XMPSidecar.Naming.append.sidecar(of: file.path), XMPSidecar.Naming.replace.sidecar(of: file.path)]
    }
}
