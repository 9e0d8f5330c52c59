#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// One file's upload: `rclone copyto` as a child process in a process group of its own,
/// under a deadline, its errors read from a file. rclone checks the size, and the
/// checksum where both ends have one; a file left half written by a killed upload is
/// written again whole by the next attempt.
final class RcloneUpload: Sendable {
    private let options: UploadSink.Options
    private let errorFile: String
    private let batchFolder: String
    private let log: Logger
    /// The rclone under way, so that the end of the session can stop it.
    private let running = Mutex<ChildProcess?>(nil)
    /// The catalogue, told of each upload.
    let copies: CopyRecorder

    init(options: UploadSink.Options, queueFolder: String, instance: String, log: Logger) {
        self.options = options
        copies = CopyRecorder(log: log)
        errorFile = "\(queueFolder)/rclone-errors-\(instance).txt"
        batchFolder = "\(queueFolder)/batch-\(instance)"
        self.log = log
    }

    /// The job's fields: the local file, its name at the remote, and whether the local
    /// file is the queue's own spooled copy (deleted once uploaded).
    static func job(remote: String, source: String, name: String, spooled: Bool) -> DeliveryQueue.Job {
        DeliveryQueue.Job(destination: remote, fields: [source, name, spooled ? "spooled" : "stored"])
    }

    /// A remote as the log, the catalogue and replies show it (``RcloneRemote/shown``).
    @Sendable static func shown(_ remote: String) -> String {
        RcloneRemote.shown(remote)
    }

    /// A line of rclone's as the log shows it: secrets masked (``SecretText``), in case
    /// rclone repeats what it was given.
    static func masked(_ line: String) -> String {
        SecretText.masked(line)
    }

    /// Uploads a batch of files for one remote: one file with `rclone copyto`, several in
    /// one `rclone copy` run (one connection, four transfers at a time) from a folder of
    /// links named as the files are to be named at the remote. An outcome per job.
    func deliver(_ jobs: [DeliveryQueue.Job]) -> [DeliveryQueue.Outcome] {
        var outcomes = [DeliveryQueue.Outcome](repeating: .done, count: jobs.count)
        var files: [(index: Int, source: String, name: String, spooled: Bool)] = []
        // Each file is opened once, without following a link, and rclone reads it through
        // this process's descriptor (/proc/PID/fd/N): a photo that whoever may write the
        // capture folder replaced by a link (to /etc/shadow) while it waited is not sent.
        var opened: [UntrustedFile] = []
        for (index, job) in jobs.enumerated() {
            guard job.fields.count == 3 else { outcomes[index] = .dropped("a damaged line in the journal"); continue }
            let (path, name) = (job.fields[0], job.fields[1])
            // Two files for one name at the remote: the second goes in the next batch.
            guard !files.contains(where: { $0.name == name }) else { outcomes[index] = .nextBatch; continue }
            let file: UntrustedFile
            do { file = try Self.open(path) } catch {
                outcomes[index] = .dropped(error.reason == .missing ? "'\(path)' is gone before it was uploaded" : "'\(path)' is not uploaded: \(error.why)")
                continue
            }
            opened.append(file)
            files.append((index, Self.reachable(file, or: path), name, job.fields[2] == "spooled"))
        }
        defer { withExtendedLifetime(opened) {} }
        guard let destination = jobs.first?.destination, !files.isEmpty else { return outcomes }
        guard let remote = RcloneRemote.parse(destination) else {
            for file in files { outcomes[file.index] = .dropped("'\(Self.shown(destination))' is not an rclone remote") }
            return outcomes
        }
        let outcome: DeliveryQueue.Outcome
        if files.count == 1 {
            let (target, environment) = remote.invocation(joining: files[0].name)
            outcome = run(["copyto", files[0].source, target, "--copy-links"], environment: environment, limit: options.timeout)
        } else {
            let folder = batchFolder
            let (target, environment) = remote.invocation()
            outcome = Self.linkBatch(files.map { ($0.source, $0.name) }, into: folder).map { DeliveryQueue.Outcome.wait($0) }
                ?? run(["copy", folder, target, "--copy-links", "--no-traverse", "--transfers", "4"], environment: environment, limit: options.timeout * files.count)
        }
        for file in files {
            outcomes[file.index] = outcome
            guard case .done = outcome else { continue }
            let path = jobs[file.index].fields[0]
            if file.spooled {
                unlink(path)
            } else {
                copies.record(path, FileCopy(destination: remote.shown, location: RcloneRemote(name: remote.name, backend: remote.backend, parameters: remote.parameters,
                                                                                                    path: RcloneRemote.join(remote.path, file.name)).shown))
            }
        }
        if case .done = outcome { log.debug("uploaded \(files.map(\.name).joined(separator: ", ")) to \(Self.shown(destination))") }
        return outcomes
    }

    /// Runs rclone with `arguments` (and the options every run takes) under `limit`, with
    /// the remote's parameters in `environment` (never on argv: `ps` shows argv to everyone).
    private func run(_ arguments: [String], environment: [String: String], limit: Duration) -> DeliveryQueue.Outcome {
        var arguments = [options.rclone] + arguments + ["--retries", "1", "--low-level-retries", "2", "--contimeout", "10s", "--timeout", "30s", "--log-level", "ERROR"]
        if let config = options.rcloneConfig { arguments += ["--config", config] }
        if let limit = options.bandwidth { arguments += ["--bwlimit", limit] }
        let child: ChildProcess
        do {
            let inherited = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("RCLONE_CONFIG_\(RcloneRemote.inlineName.uppercased())_") }
            child = try ChildProcess(arguments, environment: inherited.merging(environment) { $1 }, output: .null, error: .file(errorFile), processGroup: true)
        } catch {
            return .wait("\(options.rclone) could not start: \(error.reason) (install rclone: apt install rclone)")
        }
        running.withLock { $0 = child }
        let status = child.waitUntilExit(timeout: limit)
        if status == nil { child.signalGroup(SIGKILL) }
        let ended = status ?? child.waitUntilExit()
        running.withLock { $0 = nil }
        guard status != nil else { return .wait("an upload took longer than \(limit) (timeout); it starts again") }
        return ended.succeeded ? .done : .wait(Self.reason(errorFile, ended))
    }

    /// Opens a file to upload: never through a link, nor through a folder inside the
    /// capture folder that was replaced by one.
    static func open(_ path: String) throws(UntrustedFileError) -> UntrustedFile {
        if let link = ConfinedFolder.linkedFolder(above: path) {
            throw UntrustedFileError(path, .notRegular("in '\(link)', a symbolic link inside the capture folder (never followed)"))
        }
        return try UntrustedFile.open(path, limits: .init(bytes: 1 << 40, links: Int.max))
    }

    /// The path by which rclone reads the file open here: this process's descriptor, which
    /// keeps naming that very file whatever is renamed or linked in its place.
    static func reachable(_ file: UntrustedFile, or path: String) -> String {
        ConfinedFolder.pinsThroughProc ? "/proc/\(getpid())/fd/\(file.descriptor)" : path
    }

    /// A fresh folder of symbolic links, each named as its file is to be at the remote;
    /// says why not.
    private static func linkBatch(_ files: [(source: String, name: String)], into folder: String) -> String? {
        if let old = try? FileManager.default.contentsOfDirectory(atPath: folder) {
            for name in old { unlink("\(folder)/\(name)") }
        } else if mkdir(folder, 0o700) != 0 {
            return "cannot make '\(folder)': \(String(cString: strerror(errno)))"
        }
        for file in files where symlink(file.source, "\(folder)/\(file.name)") != 0 {
            return "cannot link \(file.name) in '\(folder)': \(String(cString: strerror(errno)))"
        }
        return nil
    }

    /// Stops the upload under way (the end of the session): it stays queued.
    func interrupt() {
        running.withLock { $0?.signalGroup(SIGTERM) }
    }

    /// rclone's last error line, without its time stamp, as the reason.
    private static func reason(_ path: String, _ status: ChildProcess.ExitStatus) -> String {
        let text = (try? DescriptorIO.readFile(path)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        let lines = text.split(separator: "\n").map { line -> String in
            // "2026/12/04 16:40:01 ERROR : IMG_1.jpg: Failed to copy: …"
            let parts = line.split(separator: " ", maxSplits: 2)
            return parts.count == 3 && parts[0].contains("/") && parts[1].contains(":") ? String(parts[2]) : String(line)
        }
        let last = lines.last { $0.contains("ERROR") || $0.contains("Failed") } ?? lines.last
        return "rclone \(status): \(last.map { LogText.escaped(masked($0)) } ?? "no message")"
    }
}
