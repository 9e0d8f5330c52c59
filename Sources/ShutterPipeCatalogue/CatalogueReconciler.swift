import Foundation
import ShutterPipeImaging
import ShutterPipeKit
import ShutterPipeSupport

/// What a reconciliation changed.
public struct ReconcileReport: Sendable, Equatable {
    /// Shots made for photos the catalogue did not have.
    public var importedShots = 0
    /// Files added to a shot the catalogue had (the RAW of a recorded JPEG, say).
    public var attachedFiles = 0
    /// Recorded files no longer on disk.
    public var missing = 0
    /// Files marked missing before that are back.
    public var back = 0
    /// Sidecars not read, each with why (a link, a FIFO, too large, not XML).
    public var refusedSidecars: [String] = []

    public init() {}

    public var changedAnything: Bool { self != ReconcileReport() }
}

extension Catalogue {
    /// Brings the catalogue in line with the photos in `folders` (searched recursively;
    /// hidden files and folders skipped): a recorded file that is gone is marked missing,
    /// one that came back is no longer, and a photo with no record becomes an `imported`
    /// shot, with its EXIF summary and the marks of its sidecar, grouped with the files
    /// of the same folder and name (a RAW+JPEG pair is one shot). A file whose folder and
    /// name match a recorded shot's joins that shot.
    ///
    /// At a session's start this is what makes the catalogue agree with the disk after a
    /// crash: photos stored between the last record and the kill come in here. A session
    /// gives the photos it `found` (``photos(in:)``) before its first shot could land, so
    /// that a shot stored while the catalogue opens is recorded by its answer, never
    /// imported.
    public func reconcile(folders: [String], naming: SidecarNaming, found: PhotosOnDisk? = nil) throws(CatalogueError) -> ReconcileReport {
        var report = ReconcileReport()
        let known = try knownFiles()
        let onDisk = found ?? Self.photos(in: folders)
        var gone: [String] = [], back: [String] = []
        for (path, record) in known {
            let exists = onDisk[path] != nil || FileManager.default.fileExists(atPath: path)
            if !exists && !record.missing { gone.append(path) }
            if exists && record.missing { back.append(path) }
        }
        try setMissing(gone, true)
        try setMissing(back, false)
        report.missing = gone.count
        report.back = back.count

        var shotOfGroup: [String: Int] = [:]
        for (path, record) in known { shotOfGroup[Self.groupKey(path)] = record.shot }
        var newGroups: [String: [String]] = [:]
        for path in onDisk.keys where known[path] == nil { newGroups[Self.groupKey(path), default: []].append(path) }

        var imports: [ShotRecord] = []
        for (group, paths) in newGroups.sorted(by: { $0.key < $1.key }) {
            let files = paths.sorted().map { Self.describe($0, size: onDisk[$0]?.size ?? 0) }
            if let shot = shotOfGroup[group] {
                try attach(files, to: shot)
                report.attachedFiles += files.count
                continue
            }
            imports.append(Self.importedShot(files, modified: paths.compactMap { onDisk[$0]?.modified }.max(), naming: naming, refused: &report.refusedSidecars))
        }
        // A sequence's frames found on disk are grouped into runs in the order they were taken.
        var runs = SequenceRuns()
        let taken = imports.indices.filter { imports[$0].sequence != nil }
            .sorted { (imports[$0].fired ?? imports[$0].stored ?? .distantPast, imports[$0].files.first?.path ?? "") < (imports[$1].fired ?? imports[$1].stored ?? .distantPast, imports[$1].files.first?.path ?? "") }
        for index in taken { imports[index].sequence = imports[index].sequence.map { runs.place($0) } }
        try record(imports, session: nil)
        report.importedShots = imports.count
        return report
    }

    /// A shot for photos found on disk.
    static func importedShot(_ files: [CatalogueFile], modified: Date?, naming: SidecarNaming, refused: inout [String]) -> ShotRecord {
        // The EXIF summary from the file libexif reads (a JPEG), else the first.
        let reference = files.first { $0.kind == .jpeg } ?? files.first
        let exif = reference.map { ExifReader.summary(of: $0.path) } ?? ExifSummary()
        var shot = ShotRecord(fired: exif.captureTime.flatMap(exifDate), stored: modified, state: .imported, files: files, exif: exif)
        let other = SidecarNaming.allCases.first { $0 != naming }!
        // Each sidecar is opened once (``XMPSidecar/document(at:)``); one refused is said, by name.
        var marked = false
        for file in files {
            for sidecar in [naming.sidecar(of: file.path), other.sidecar(of: file.path)] {
                let document: XMPDocument?
                do { document = try XMPSidecar.document(at: sidecar) } catch {
                    refused.append(error.description)
                    continue
                }
                guard let document else { continue }
                if !marked, let marks = XMPSidecar.marks(in: document) {
                    (shot.rating, shot.label, shot.pick) = (marks.rating, marks.label, marks.pick)
                    marked = true
                }
                shot.keywords += XMPSidecar.keywords(in: document).filter { !shot.keywords.contains($0) }
                if shot.sequence == nil { shot.sequence = SequencePlaceReader.place(in: document) }
            }
        }
        // Its place in a sequence, as the files sink wrote it into the JPEG itself.
        if shot.sequence == nil, let jpeg = files.first(where: { $0.kind == .jpeg }), let document = SequencePlaceReader.embedded(in: jpeg.path) {
            shot.sequence = SequencePlaceReader.place(in: document)
        }
        return shot
    }

    /// A file as recorded: size, kind, SHA-256.
    static func describe(_ path: String, size: Int, cameraFile: String? = nil, digesting: Bool = true) -> CatalogueFile {
        CatalogueFile(path: path, size: size, kind: FileKind.of(path) ?? .jpeg, sha256: digesting ? FileDigest.sha256(of: path) : nil,
                      cameraFile: cameraFile)
    }

    /// Folder and name without extension: the files of one shot share it.
    static func groupKey(_ path: String) -> String {
        PathName.deletingExtension(path)
    }

    /// The photos of some folders: absolute path → size and modification time.
    public typealias PhotosOnDisk = [String: (size: Int, modified: Date?)]

    /// The photos under `folders`: absolute path → size and modification time.
    static func photos(in folders: [String]) -> PhotosOnDisk {
        var found: [String: (size: Int, modified: Date?)] = [:]
        let keys: [URLResourceKey] = [.isRegularFileKey, .fileSizeKey, .contentModificationDateKey]
        for folder in folders {
            let root = URL(fileURLWithPath: absolute(folder))
            guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: keys, options: [.skipsHiddenFiles]) else { continue }
            for case let url as URL in walker {
                guard FileKind.of(url.lastPathComponent) != nil,
                      let values = try? url.resourceValues(forKeys: Set(keys)), values.isRegularFile == true else { continue }
                found[url.path] = (values.fileSize ?? 0, values.contentModificationDate)
            }
        }
        return found
    }

    /// `path` made absolute against the working folder, with `.` and `..` resolved.
    public static func absolute(_ path: String) -> String {
        let full = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        return URL(fileURLWithPath: full).standardizedFileURL.path
    }

    /// EXIF's "2026:12:03 14:02:11", in local time.
    static func exifDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy:MM:dd HH:mm:ss"
        return formatter.date(from: text)
    }
}
