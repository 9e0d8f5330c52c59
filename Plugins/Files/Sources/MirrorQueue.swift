#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CCrypto
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// The copies of stored photos to a files sink's `mirror:` folders (a USB disk, a NAS
/// mount), made after the primary store on a thread of their own, so a shot's answer
/// never waits for them.
///
/// - The queue is a ``DeliveryQueue`` journalled beside the photos
///   (`.shutterpipe-mirror-queue`): a copy is in it, fsynced, before the shot is
///   answered. A killed session loses none: the next start replays it.
/// - A copy is written as the photos are (temporary file, fsync, link; never over an
///   existing file), then read back and checked against the source by size and SHA-256.
/// - A mirror that is absent (unplugged, not mounted) or full keeps its copies queued:
///   the log says so once, and they go on by themselves when it is back.
final class MirrorQueue: Sendable {
    /// One copy: the source under the primary folder, its path relative to it, the mirror.
    struct Job: Hashable {
        var mirror: String
        var source: String
        var relative: String
        var delivery: DeliveryQueue.Job { DeliveryQueue.Job(destination: mirror, fields: [source, relative]) }
    }

    static let journalName = ".shutterpipe-mirror-queue"

    private let queue: DeliveryQueue
    /// The catalogue, told of each copy.
    let copies: CopyRecorder

    /// The queue of the sink whose photos are under `folder`.
    init(folder: String, log: Logger) {
        let copies = CopyRecorder(log: log)
        self.copies = copies
        queue = DeliveryQueue(journal: "\(folder)/\(Self.journalName)", what: "mirror", noun: "copy(ies)", log: log) { job in
            guard job.fields.count == 2 else { return .dropped("a damaged line in the journal") }
            return Self.copy(Job(mirror: job.destination, source: job.fields[0], relative: job.fields[1]), copies: copies)
        }
    }

    /// Replays the journal (what a killed session left) and starts copying.
    func start() { queue.start() }

    /// Asks for copies, durably: returns once they are in the journal.
    func enqueue(_ jobs: [Job]) throws(ShutterError) { try queue.enqueue(jobs.map(\.delivery)) }

    /// How many copies wait.
    var queued: Int { queue.snapshot.queued }

    /// The status line's words, when copies wait.
    var statusNote: String? { queue.statusNote }

    /// Waits up to `limit` for the queue to empty, then stops; what is left stays in the
    /// journal for the next start.
    func stop(within limit: Duration) { queue.stop(within: limit) }

    /// Copies one file, checked; says why not.
    private static func copy(_ job: Job, copies: CopyRecorder) -> DeliveryQueue.Outcome {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: job.mirror, isDirectory: &isDirectory), isDirectory.boolValue else {
            return .wait("it is not there (unplugged, or not mounted?)")
        }
        // The photo as stored, never what a link put in its place points at (whoever may
        // write the capture folder could swap it while the mirror is unplugged).
        let data: Data
        do { data = try source(of: job) } catch {
            return .dropped(error.message)
        }
        let digest = PhotoDigest.sha256(data)
        var target = "\(job.mirror)/\(job.relative)"
        let folder: ConfinedFolder
        do throws(ShutterError) {
            // Folders below the mirror's own are never reached through a link.
            folder = try DurableWriter.confinedFolder(PathName.parent(target), below: job.mirror)
            var suffix = 1
            while !(try DurableWriter.writeNew(data, to: target, in: folder)) {
                // A file of that name: this very copy, made before a kill, or another photo.
                if let existing = Self.read(PathName.lastComponent(target), in: folder), PhotoDigest.sha256(existing) == digest { break }
                suffix += 1
                target = "\(job.mirror)/\(CollisionSuffixes.numbered(job.relative, suffix))"
            }
            do { try folder.sync() } catch { throw DurableWriter.storageError("cannot sync folder", folder.path, error.code) }
        } catch {
            return .wait(error.message)
        }
        guard let back = Self.read(PathName.lastComponent(target), in: folder), back.count == data.count, PhotoDigest.sha256(back) == digest else {
            return .wait("the copy '\(target)' does not read back as the photo (size or SHA-256 differ): the disk may be failing")
        }
        copies.record(job.source, FileCopy(destination: job.mirror, location: target))
        return .done
    }

    /// The bytes of the job's photo, read through its folder below the capture folder
    /// (`source` ends in `relative`), never through a link on the way.
    private static func source(of job: Job) throws(ShutterError) -> Data {
        let gone = ShutterError(.storageUnavailable, "'\(job.source)' is gone before it was copied")
        let source = Array(job.source.utf8), relative = Array(("/" + job.relative).utf8)
        guard source.count > relative.count, Array(source.suffix(relative.count)) == relative else { throw gone }
        let root = String(decoding: source.dropLast(relative.count), as: UTF8.self)
        let folder: ConfinedFolder
        do { folder = try ConfinedFolder.open(PathName.parent(job.source), below: root, create: nil) } catch {
            if case .system(ENOENT) = error.reason { throw gone }
            throw ShutterError(.storageUnavailable, "'\(job.source)' is not copied: \(error)", fix: error.fix)
        }
        do {
            return try UntrustedFile.open(Array(PathName.lastComponent(job.source).utf8), in: folder.descriptor,
                                          limits: .init(bytes: 4_000_000_000, links: Int.max)).read()
        } catch {
            if error.reason == .missing { throw gone }
            throw ShutterError(.storageUnavailable, "'\(job.source)' is not copied: \(error.why)")
        }
    }

    /// A file's bytes in `folder`, never through a link; nil when it cannot be read.
    private static func read(_ name: String, in folder: ConfinedFolder) -> Data? {
        try? UntrustedFile.open(Array(name.utf8), in: folder.descriptor, limits: .init(bytes: 4_000_000_000, links: Int.max)).read()
    }
}
