import Foundation
import ShutterPipeImaging
import ShutterPipeKit

/// A shot as the session answered it, recorded on the writer thread (where its files are
/// read for their digest and EXIF).
struct PendingShot: Sendable {
    var answer: ShutterAnswer
    var trigger: String
    var camera: String?
    var observed: Date
    /// Its place in a sequence, when one took it.
    var sequence: CatalogueSequencePlace? = nil
    /// The EXIF summary of its reference file, once read.
    var exif: ExifSummary? = nil

    /// The shot with its reference file's EXIF summary read.
    func withExifRead() -> PendingShot {
        var shot = self
        shot.exif = readExif()
        return shot
    }

    /// The EXIF summary of the file it is recorded by (its JPEG, else its first photo
    /// file): as the sink read it from the bytes it wrote (``StoredFile/exif``), else read
    /// from the file.
    private func readExif() -> ExifSummary {
        let files = answer.stored.filter { $0.cameraFile != nil && FileKind.of($0.location) != nil }
        guard let reference = files.first(where: { FileKind.of($0.location) == .jpeg }) ?? files.first else { return ExifSummary() }
        return reference.exif ?? ExifReader.summary(of: Catalogue.absolute(reference.location))
    }

    /// The record, with the digests its sinks gave (taken out of `digests`); the others
    /// read from the files only when `digesting` (not during a burst).
    func record(digesting: Bool, digests: inout [String: String]) -> ShotRecord {
        let files = answer.stored.compactMap { stored -> CatalogueFile? in
            guard stored.cameraFile != nil, FileKind.of(stored.location) != nil else { return nil }
            // The digest the sink computed from the bytes it wrote, when it came already;
            // read back only for a sink that gives none, and then not mid-burst.
            let path = Catalogue.absolute(stored.location)
            let given = digests.removeValue(forKey: path)
            var file = Catalogue.describe(path, size: stored.byteCount, cameraFile: stored.cameraFile, digesting: digesting && given == nil)
            file.sha256 = given ?? file.sha256
            file.camera = stored.camera
            return file
        }
        let succeeded = answer.state == .photoSuccess
        var record = ShotRecord(
            shotID: answer.shot, trigger: trigger, camera: camera,
            asked: observed.addingTimeInterval(-answer.duration.inSeconds),
            fired: answer.captureTime, stored: succeeded ? observed : nil, state: succeeded ? .stored : .failed,
            failureCause: answer.failure?.cause.rawValue, failureMessage: answer.failure?.description, files: files,
            exif: exif ?? readExif())
        record.sessionLabel = answer.label
        record.sequence = sequence
        return record
    }
}
