#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit

/// Deliveries made after a shot is stored (a copy to a mirror disk, an upload), on a
/// thread of their own, from a journal that survives a kill: a shot's answer never
/// waits for them, and none is lost.
///
/// - The journal is a text file: a line when a delivery is asked for, appended and
///   fsynced before ``enqueue(_:)`` returns, and a line when it is done. The next start
///   replays what is left, and rewrites the journal without what is done.
/// - Deliveries go in order, one at a time (or a batch of one destination's). One whose
///   destination fails waits (1 s, doubling to 30 s) while the other destinations go
///   on; the log says so once per outage, and again when it is over.
/// - ``deliver`` must be safe to run twice for one job (a kill between the delivery and
///   its journal line makes the next start run it again).
public final class DeliveryQueue: @unchecked Sendable {  // every `var` under `lock`
    /// One delivery: where to, and what (fields without tabs or line breaks of their own
    /// are kept as they are; others are escaped in the journal).
    public struct Job: Hashable, Sendable {
        public var destination: String
        public var fields: [String]

        public init(destination: String, fields: [String]) {
            self.destination = destination
            self.fields = fields
        }

        var line: String { ([destination] + fields).map(Self.escaped).joined(separator: "\t") }

        static func escaped(_ field: String) -> String {
            field.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "\t", with: "%09").replacingOccurrences(of: "\n", with: "%0A")
        }

        static func unescaped(_ field: Substring) -> String {
            String(field).replacingOccurrences(of: "%0A", with: "\n").replacingOccurrences(of: "%09", with: "\t").replacingOccurrences(of: "%25", with: "%")
        }
    }

    /// What became of one attempt.
    public enum Outcome: Sendable {
        /// Delivered; the journal records it.
        case done
        /// It can never be made (its source is gone): dropped, with the reason logged.
        case dropped(String)
        /// Not now (the destination is absent, full or unreachable): tried again later.
        case wait(String)
        /// Not tried in this batch (it goes in the next): no failure, no pause.
        case nextBatch
    }

    /// What waits, and why, for status displays.
    public struct Snapshot: Sendable, Equatable {
        public var queued: Int
        public var delivered: Int
        /// Each waiting destination with the reason it gave.
        public var waiting: [String: String]
    }

    /// The largest journal read back: about 200,000 waiting deliveries.
    static let journalLimit: Int64 = 64 << 20

    private let journal: String
    private let what: String
    private let noun: String
    private let log: Logger
    private let deliver: @Sendable ([Job]) -> [Outcome]
    private let batch: Int
    private let shown: @Sendable (String) -> String
    private let lock = NSCondition()
    private var pending: [Job] = []
    private var stopping = false
    private var busy = false
    private var waiting: [String: String] = [:]
    /// Failed attempts in a row, per destination.
    private var failures: [String: Int] = [:]
    private var delivered = 0

    /// A queue journalled in `journal`; `what` names the queue in the log ("mirror",
    /// "upload") and `noun` counts its deliveries ("copy(ies)"); `deliver` makes one, on
    /// the queue's thread; `shown` is how a destination appears in the log (without a
    /// password, say).
    public convenience init(journal: String, what: String, noun: String, log: Logger, shown: @escaping @Sendable (String) -> String = { $0 },
                            deliver: @escaping @Sendable (Job) -> Outcome) {
        self.init(journal: journal, what: what, noun: noun, log: log, shown: shown, batch: 1) { jobs in jobs.map(deliver) }
    }

    /// A queue that hands `deliver` up to `batch` waiting jobs of one destination at a time
    /// (one program run for many files costs one connection, not one each); `deliver`
    /// returns an outcome per job, in order.
    public init(journal: String, what: String, noun: String, log: Logger, shown: @escaping @Sendable (String) -> String = { $0 },
                batch: Int, deliver: @escaping @Sendable ([Job]) -> [Outcome]) {
        self.shown = shown
        self.batch = max(1, batch)
        self.journal = journal
        self.what = what
        self.noun = noun
        self.log = log
        self.deliver = deliver
    }

    /// Replays the journal (what a killed session left) and starts delivering.
    public func start() {
        var asked: [Job] = [], done: [Job: Int] = [:]
        var data: Data?
        do {
            let file = try UntrustedFile.open(journal, limits: .init(bytes: Self.journalLimit))
            // Journals name destinations, which may carry credentials: the session's alone.
            if file.status.st_mode & 0o077 != 0 { fchmod(file.descriptor, 0o600) }
            data = try file.read()
        } catch where error.reason == .missing {
            data = nil
        } catch {
            log.warning("\(what): cannot read '\(journal)': \(error.why); what an earlier run left queued is not delivered (fix or remove the file)")
        }
        let text = data.map { String(decoding: $0, as: UTF8.self) } ?? ""
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count >= 2, let mark = fields.first, mark == "+" || mark == "-" else { continue }
            let job = Job(destination: Job.unescaped(fields[1]), fields: fields.dropFirst(2).map(Job.unescaped))
            if mark == "+" { asked.append(job) } else { done[job, default: 0] += 1 }
        }
        var left: [Job] = []
        for job in asked {
            if let count = done[job], count > 0 { done[job] = count - 1 } else { left.append(job) }
        }
        if !text.isEmpty { compact(left) }
        if !left.isEmpty { log.info("\(what): \(left.count) \(noun) left queued by an earlier run: going on with them") }
        lock.withLock { pending = left }
        OwnedThread.start("shutterpipe \(what)") { [self] in run() }
    }

    /// Asks for deliveries, durably: returns once they are in the journal.
    public func enqueue(_ jobs: [Job]) throws(ShutterError) {
        guard !jobs.isEmpty else { return }
        try append(jobs.map { "+\t\($0.line)\n" }.joined())
        lock.withLock {
            pending += jobs
            lock.broadcast()
        }
    }

    /// How many deliveries wait, how many were made, and which destinations wait why.
    public var snapshot: Snapshot {
        lock.withLock { Snapshot(queued: pending.count, delivered: delivered, waiting: waiting) }
    }

    /// The status line's words: `upload 3 queued`, `mirror '/media/usb' waiting, 12
    /// queued`; `nil` when nothing waits.
    public var statusNote: String? {
        lock.withLock {
            guard !pending.isEmpty else { return nil }
            let away = waiting.keys.sorted().map { "'\(shown($0))' waiting" }
            return "\(what) " + (away + ["\(pending.count) queued"]).joined(separator: ", ")
        }
    }

    /// Waits up to `limit` for the queue to empty (not for a destination that failed three
    /// times in a row: it is away, not hiccuping), then calls `interrupt` (which makes a delivery under way give up: kills
    /// its program, say) and stops the thread once that delivery returns; what is left
    /// stays in the journal for the next start.
    public func stop(within limit: Duration, interrupt: () -> Void = {}) {
        let deadline = Date(timeIntervalSinceNow: Double(limit / .milliseconds(1)) / 1000)
        lock.lock()
        while pending.contains(where: { failures[$0.destination, default: 0] < 3 }) && Date() < deadline { _ = lock.wait(until: deadline) }
        stopping = true
        lock.broadcast()
        if busy { interrupt() }
        while busy { lock.wait() }
        let left = pending.count
        lock.unlock()
        if left > 0 { log.warning("\(what): \(left) \(noun) still queued; they are made at the next start") }
    }

    private func run() {
        var backoff: [String: Double] = [:], until: [String: Date] = [:]
        while true {
            lock.lock()
            var jobs: [Job] = []
            while !stopping {
                let now = Date()
                if let first = pending.first(where: { (until[$0.destination] ?? .distantPast) <= now }) {
                    // The first due job, and those after it for the same destination.
                    jobs = Array(pending.filter { $0.destination == first.destination }.prefix(batch))
                    break
                }
                // Nothing to do now: a new job, a stop, or the first destination due, wakes us.
                if let due = pending.compactMap({ until[$0.destination] }).min() { _ = lock.wait(until: due) } else { lock.wait() }
            }
            guard let destination = jobs.first?.destination else {
                lock.unlock()
                return
            }
            busy = true
            lock.unlock()
            var outcomes = deliver(jobs)
            if outcomes.count != jobs.count { outcomes = Array(repeating: .wait("the delivery gave no outcome for every file"), count: jobs.count) }
            lock.withLock { busy = false; lock.broadcast() }
            var done: [Job] = []
            var why: String?
            for (job, outcome) in zip(jobs, outcomes) {
                switch outcome {
                case .done:
                    done.append(job)
                case .dropped(let reason):
                    log.warning("\(what) to '\(shown(destination))': \(reason): dropped")
                    done.append(job)
                case .wait(let reason):
                    why = why ?? reason
                case .nextBatch:
                    break
                }
            }
            finished(done, destination: destination)
            if let why {
                let pause = backoff[destination] ?? 1
                backoff[destination] = min(pause * 2, 30)
                until[destination] = Date(timeIntervalSinceNow: pause)
                lock.lock()
                failures[destination, default: 0] += 1
                if waiting[destination] != why {
                    waiting[destination] = why
                    let queued = pending.filter { $0.destination == destination }.count
                    log.warning("\(what) '\(shown(destination))': \(why); \(queued) \(noun) wait and go on by themselves when it works again")
                }
                lock.broadcast()
                lock.unlock()
            } else {
                backoff[destination] = nil
                until[destination] = nil
                lock.withLock { failures[destination] = nil }
            }
        }
    }

    private func finished(_ jobs: [Job], destination: String) {
        guard !jobs.isEmpty else { return }
        // Unrecorded, a delivery is made again at the next start (``deliver`` is safe to
        // run twice): nothing is lost.
        do { try append(jobs.map { "-\t\($0.line)\n" }.joined()) } catch { log.debug("\(what): \(error.message)") }
        lock.lock()
        for job in jobs {
            if let index = pending.firstIndex(of: job) { pending.remove(at: index) }
        }
        if let why = waiting.removeValue(forKey: destination) { log.info("\(what) '\(shown(destination))' works again (it was: \(why)); catching up") }
        delivered += jobs.count
        lock.broadcast()
        lock.unlock()
    }

    /// Rewrites the journal with only what is left (temporary file, fsync, rename), so it
    /// does not grow without end across runs.
    private func compact(_ left: [Job]) {
        // A journal that cannot be compacted now stays as it is: it is still right.
        try? DurableFile.replace(journal, with: Data(left.map { "+\t\($0.line)\n" }.joined().utf8))
    }

    private func append(_ text: String) throws(ShutterError) {
        do { try DurableFile.append(Data(text.utf8), to: journal) } catch { throw Self.storageError(journal, error.code) }
    }

    private static func storageError(_ path: String, _ code: Int32) -> ShutterError {
        ShutterError(.storageUnavailable, "cannot record deliveries in '\(path)': \(String(cString: strerror(code)))",
                     fix: "free space on that disk, or fix the folder's owner or mode")
    }
}
