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
    private let log: Logger
    /// The rclone under way, so that the end of the session can stop it.
    private let running = Mutex<ChildProcess?>(nil)

    init(options: UploadSink.Options, queueFolder: String, log: Logger) {
        self.options = options
        errorFile = "\(queueFolder)/rclone-errors.txt"
        self.log = log
    }

    /// The job's fields: the local file, its name at the remote, and whether the local
    /// file is the queue's own spooled copy (deleted once uploaded).
    static func job(remote: String, source: String, name: String, spooled: Bool) -> DeliveryQueue.Job {
        DeliveryQueue.Job(destination: remote, fields: [source, name, spooled ? "spooled" : "stored"])
    }

    /// A remote as the log shows it: an inline remote's password and secrets left out.
    @Sendable static func shown(_ remote: String) -> String {
        remote.replacing(/(pass|password|key|secret_access_key|token|client_secret)=('[^']*'|"[^"]*"|[^,:]*)/) { "\($0.output.1)=…" }
    }

    /// Uploads one file; says why not.
    func deliver(_ job: DeliveryQueue.Job) -> DeliveryQueue.Outcome {
        guard job.fields.count == 3 else { return .dropped("a damaged line in the journal") }
        let (source, name, spooled) = (job.fields[0], job.fields[1], job.fields[2] == "spooled")
        guard access(source, R_OK) == 0 else { return .dropped("'\(source)' is gone before it was uploaded") }
        let target = job.destination.hasSuffix(":") || job.destination.hasSuffix("/") ? job.destination + name : "\(job.destination)/\(name)"
        var arguments = [options.rclone, "copyto", source, target, "--retries", "1", "--low-level-retries", "2",
                         "--contimeout", "10s", "--timeout", "30s", "--log-level", "ERROR"]
        if let config = options.rcloneConfig { arguments += ["--config", config] }
        if let limit = options.bandwidth { arguments += ["--bwlimit", limit] }
        let started = ContinuousClock.now
        let child: ChildProcess
        do {
            child = try ChildProcess(arguments, output: .null, error: .file(errorFile), processGroup: true)
        } catch {
            return .wait("\(options.rclone) could not start: \(error.reason) (install rclone: apt install rclone)")
        }
        running.withLock { $0 = child }
        let status = child.waitUntilExit(timeout: options.timeout)
        if status == nil { child.signalGroup(SIGKILL) }
        let ended = status ?? child.waitUntilExit()
        running.withLock { $0 = nil }
        guard status != nil else { return .wait("the upload of \(name) took longer than \(options.timeout) (timeout); it starts again") }
        guard ended.succeeded else { return .wait(Self.reason(errorFile, ended)) }
        if spooled { unlink(source) }
        let seconds = Double((ContinuousClock.now - started) / .milliseconds(1)) / 1000
        log.debug("uploaded \(name) to \(Self.shown(target)) in \(String(format: "%.2f", seconds)) s")
        return .done
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
        return "rclone \(status): \(last.map { LogText.escaped(shown($0)) } ?? "no message")"
    }
}
