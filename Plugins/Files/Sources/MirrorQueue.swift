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
/// - The queue is a journal beside the photos (`.shutterpipe-mirror-queue`): a line when
///   a copy is asked for, appended and fsynced before the shot is answered, and a line
///   when it is made. A killed session loses none: the next start replays it.
/// - A copy is written as the photos are (temporary file, fsync, link; never over an
///   existing file), then read back and checked against the source by size and SHA-256.
/// - A mirror that is absent (unplugged, not mounted) or full keeps its copies queued:
///   the log says so once, and they go on by themselves when it is back.
final class MirrorQueue: @unchecked Sendable {  // every `var` under `lock`
    /// One copy: the source under the primary folder, its path relative to it, the mirror.
    struct Job: Hashable {
        var mirror: String
        var source: String
        var relative: String
        var line: String { "\(mirror)\t\(source)\t\(relative)" }
    }

    static let journalName = ".shutterpipe-mirror-queue"

    private let journal: String
    private let log: Logger
    private let lock = NSCondition()
    private var pending: [Job] = []
    private var stopping = false
    private var thread: Thread?
    /// Why each mirror waits, as last logged: said once per outage, and when it is over.
    private var waiting: [String: String] = [:]
    private var copied = 0

    /// The queue of the sink whose photos are under `folder`.
    init(folder: String, log: Logger) {
        journal = "\(folder)/\(Self.journalName)"
        self.log = log
    }

    /// Replays the journal (what a killed session left) and starts copying.
    func start() {
        var asked: [Job] = [], done = Set<Job>()
        let data = FileManager.default.contents(atPath: journal)
        let text = data.map { String(decoding: $0, as: UTF8.self) } ?? ""
        if data == nil && FileManager.default.fileExists(atPath: journal) {
            log.warning("mirror: cannot read '\(journal)': copies an earlier run left queued are not made (fix the file's owner or mode)")
        }
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 4 else { continue }
            let job = Job(mirror: fields[1], source: fields[2], relative: fields[3])
            if fields[0] == "+" { asked.append(job) } else { done.insert(job) }
        }
        let left = asked.filter { !done.contains($0) }
        // Nothing left: the journal starts afresh (emptying it loses nothing).
        if left.isEmpty && !text.isEmpty { truncate(journal, 0) }
        if !left.isEmpty { log.info("mirror: \(left.count) copy(ies) left queued by an earlier run: going on with them") }
        lock.withLock { pending = left }
        let thread = Thread { [self] in run() }
        thread.name = "shutterpipe mirror"
        lock.withLock { self.thread = thread }
        thread.start()
    }

    /// Asks for copies, durably: returns once they are in the journal.
    func enqueue(_ jobs: [Job]) throws(ShutterError) {
        guard !jobs.isEmpty else { return }
        try append(jobs.map { "+\t\($0.line)\n" }.joined())
        lock.withLock {
            pending += jobs
            lock.broadcast()
        }
    }

    /// How many copies wait.
    var queued: Int { lock.withLock { pending.count } }

    /// Waits up to `limit` for the queue to empty, then stops the thread; what is left
    /// stays in the journal for the next start.
    func stop(within limit: Duration) {
        let deadline = Date(timeIntervalSinceNow: Double(limit / .milliseconds(1)) / 1000)
        lock.lock()
        while !pending.isEmpty && waiting.isEmpty && Date() < deadline { _ = lock.wait(until: deadline) }
        let left = pending.count
        stopping = true
        lock.broadcast()
        lock.unlock()
        if left > 0 { log.warning("mirror: \(left) copy(ies) still queued; they are made at the next start") }
    }

    /// Copies in order; a mirror that fails waits (1 s, doubling to 30 s) while the other
    /// mirrors go on.
    private func run() {
        var backoff: [String: Double] = [:], until: [String: Date] = [:]
        while true {
            lock.lock()
            var job: Job?
            while !stopping {
                let now = Date()
                job = pending.first { (until[$0.mirror] ?? .distantPast) <= now }
                if job != nil { break }
                // Nothing to do now: a new job, a stop, or the first mirror due, wakes us.
                if let due = pending.compactMap({ until[$0.mirror] }).min() { _ = lock.wait(until: due) } else { lock.wait() }
            }
            lock.unlock()
            guard let job else { return }
            switch copy(job) {
            case .done:
                backoff[job.mirror] = nil
                until[job.mirror] = nil
                finished(job)
            case .sourceGone:
                log.warning("mirror: '\(job.source)' is gone before it was copied to '\(job.mirror)': that copy is dropped")
                finished(job)
            case .wait(let why):
                let pause = backoff[job.mirror] ?? 1
                backoff[job.mirror] = min(pause * 2, 30)
                until[job.mirror] = Date(timeIntervalSinceNow: pause)
                lock.lock()
                if waiting[job.mirror] != why {
                    waiting[job.mirror] = why
                    let queued = pending.filter { $0.mirror == job.mirror }.count
                    log.warning("mirror '\(job.mirror)': \(why); \(queued) copy(ies) wait and go on by themselves when it works again")
                }
                lock.unlock()
            }
        }
    }

    private func finished(_ job: Job) {
        // Unrecorded, the copy is checked again at the next start: its file is there with
        // the same SHA-256, so it counts as made. Nothing is copied twice.
        do { try append("-\t\(job.line)\n") } catch { log.debug("mirror: \(error.message)") }
        lock.lock()
        if let index = pending.firstIndex(of: job) { pending.remove(at: index) }
        if let why = waiting.removeValue(forKey: job.mirror) { log.info("mirror '\(job.mirror)' works again (it was: \(why)); catching up") }
        copied += 1
        lock.broadcast()
        lock.unlock()
    }

    private enum Outcome { case done, sourceGone, wait(String) }

    /// Copies one file, checked; says why not.
    private func copy(_ job: Job) -> Outcome {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: job.mirror, isDirectory: &isDirectory), isDirectory.boolValue else {
            return .wait("it is not there (unplugged, or not mounted?)")
        }
        guard let data = FileManager.default.contents(atPath: job.source) else { return .sourceGone }
        let digest = Self.sha256(data)
        var target = "\(job.mirror)/\(job.relative)"
        do {
            try DurableWriter.createDirectory((target as NSString).deletingLastPathComponent)
            var suffix = 1
            while !(try DurableWriter.writeNew(data, to: target)) {
                // A file of that name: this very copy, made before a kill, or another photo.
                if let existing = FileManager.default.contents(atPath: target), Self.sha256(existing) == digest { break }
                suffix += 1
                target = "\(job.mirror)/\(CollisionSuffixes.numbered(job.relative, suffix))"
            }
            try DurableWriter.syncDirectory((target as NSString).deletingLastPathComponent)
        } catch {
            return .wait(error.message)
        }
        guard let back = FileManager.default.contents(atPath: target), back.count == data.count, Self.sha256(back) == digest else {
            return .wait("the copy '\(target)' does not read back as the photo (size or SHA-256 differ): the disk may be failing")
        }
        return .done
    }

    private func append(_ text: String) throws(ShutterError) {
        let descriptor = open(journal, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw DurableWriter.storageError("cannot record mirror copies in", journal, errno) }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(descriptor) == 0 else { throw DurableWriter.storageError("cannot record mirror copies in", journal, errno) }
    }

    static func sha256(_ data: Data) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        data.withUnsafeBytes { raw in _ = EVP_Digest(raw.baseAddress, raw.count, &digest, &length, EVP_sha256(), nil) }
        return Array(digest.prefix(Int(length)))
    }
}
