#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeKit
import TestSupport
import Testing

func stubPipeline(_ directory: String, backend: String = "", coordinator: String = "") -> String {
    """
    version: 1
    session: e2e
    backend:
      type: file-stub
    \(backend)
    triggers:
      - type: stdin
    sinks:
      - type: files
        directory: \(directory)
    \(coordinator)
    """
}

@Suite("shutterpipe end to end (the built binary)", .timeLimit(.minutes(2)))
struct EndToEndTests {
    @Test("the README quickstart: two captures print two photoSuccess lines and leave two JPEGs in ./captures")
    func quickstart() async throws {
        let folder = TemporaryDirectory("quickstart")
        try FileManager.default.createDirectory(atPath: folder.file("Config"), withIntermediateDirectories: true)
        try copyTestFile("\(repositoryRoot)/Config/default.yaml", to: folder.file("Config/default.yaml"))
        let outcome = try await shutterpipe(["run"], input: "enter\ncapture\ncapture\nexit\n", in: folder.path)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.lines == [
            "enteredPhotoMode", "photoSuccess ./captures/session-0001.jpg", "photoSuccess ./captures/session-0002.jpg",
            "exitedOrUnableToEnter",
        ])
        #expect(folder.names("captures") == [".shutterpipe", ".shutterpipe-sequence", "session-0001.jpg", "session-0002.jpg"])
        #expect(folder.names("captures/.shutterpipe").contains("catalogue.sqlite"), "the catalogue, on by default")
        let report = try await ExifTool.run(["-s3", "-validate", "-error", "-warning", folder.file("captures/session-0001.jpg")])
        #expect(report.trimmingCharacters(in: .whitespacesAndNewlines) == "OK", "exiftool: \(report)")
        // One human line per event on stderr, with the time it took; no status line off a terminal.
        #expect(outcome.stderr.contains("capture from stdin → photoSuccess in "))
        #expect(!outcome.stderr.contains("\u{1B}["))
    }

    @Test("the sequence continues across runs")
    func sequenceAcrossRuns() async throws {
        let folder = TemporaryDirectory("restart")
        let config = try writeConfig(stubPipeline(folder.file("out")), in: folder)
        _ = try await shutterpipe(["run", "--config", config], input: "capture\ncapture\n", in: folder.path)
        let second = try await shutterpipe(["run", "-c", config], input: "capture\n", in: folder.path)
        #expect(second.lines.first == "photoSuccess \(folder.file("out"))/e2e-0003.jpg")
    }

    @Test("failures print the cause and message; the run exits 4, and its last log line gives the count")
    func failuresPrinted() async throws {
        let folder = TemporaryDirectory("failures")
        let config = try writeConfig(stubPipeline(folder.file("out"), backend: "  failEvery: 2"), in: folder)
        let outcome = try await shutterpipe(["run", "--config", config], input: "enter\ncapture\ncapture\nhello\nexit\n", in: folder.path)
        #expect(outcome.status == 4)
        #expect(outcome.stderr.split(separator: "\n").last?.hasSuffix("1 event(s) failed (1 of them shots): exit 4") == true, "\(outcome.stderr)")
        #expect(outcome.lines.count == 5)
        #expect(outcome.lines[2] == "photoFailed cameraFailure: file-stub: simulated failure of capture 2 (failEvery: 2)")
        #expect(outcome.lines[3] == "enteredPhotoMode")  // unknown: answered with the current mode
        #expect(outcome.stderr.contains("unknown command 'hello' from stdin: ignored"))
        #expect(outcome.stderr.contains("line 4 'hello' is not a command: the commands are enter, capture and exit, one per line"))
    }

    @Test("a camera that cannot enter answers exitedOrUnableToEnter with the cause")
    func enterFailure() async throws {
        let folder = TemporaryDirectory("enter")
        let config = try writeConfig(stubPipeline(folder.file("out"), backend: "  failOnEnter: true"), in: folder)
        let outcome = try await shutterpipe(["run", "--config", config], input: "enter\ncapture\n", in: folder.path)
        #expect(outcome.lines.first?.hasPrefix("exitedOrUnableToEnter noCamera: file-stub: simulated failure") == true)
        #expect(outcome.lines[1].hasPrefix("photoFailed noCamera:"))
        #expect(outcome.status == 4 && outcome.stderr.contains("2 event(s) failed (1 of them shots): exit 4"), "\(outcome.stderr)")
    }

    @Test("preflight: a destination that cannot work fails the run at start, exit 1, before any event; low free space is a warning at start")
    func preflight() async throws {
        let folder = TemporaryDirectory("preflight")
        try "not a folder".writeTestFile(folder.file("out"))
        let blocked = try writeConfig(stubPipeline(folder.file("out")), in: folder)
        let failed = try await shutterpipe(["run", "--config", blocked], input: "capture\n", in: folder.path)
        #expect(failed.status == 1 && failed.stdout.isEmpty, "\(failed.stdout)")
        #expect(failed.stderr.contains("sink 'files' could not start") && failed.stderr.contains("exists but is not a folder"), "\(failed.stderr)")
        #expect(!failed.stderr.contains("capture from stdin"), "an event was taken: \(failed.stderr)")
        // Created at start, before the first shot; under minFreeSpace: a warning, and it shoots.
        let roomy = try writeConfig(stubPipeline(folder.file("new/out")).replacingOccurrences(of: "    directory: \(folder.file("new/out"))",
                                                                                                with: "    directory: \(folder.file("new/out"))\n    minFreeSpace: 1000TB"), in: folder)
        let session = try await RunningProcess.start(["run", "--config", roomy], in: folder.path)
        #expect(await eventually { FileManager.default.fileExists(atPath: folder.file("new/out")) })
        #expect(await eventually { session.stderrSoFar.contains("(minFreeSpace: 1000000.0 GB)") }, "\(session.stderrSoFar)")
        session.send("capture\n")
        session.closeInput()
        let outcome = await session.wait()
        #expect(outcome.status == 0 && outcome.stdout.hasPrefix("photoSuccess"), "\(outcome.stdout) \(outcome.stderr)")
        let bad = try writeConfig(stubPipeline(folder.file("out2")).replacingOccurrences(of: "    directory: \(folder.file("out2"))",
                                                                                          with: "    directory: \(folder.file("out2"))\n    minFreeSpace: lots"), in: folder)
        let invalid = try await shutterpipe(["validate", bad], in: folder.path)
        #expect(invalid.status == 3 && invalid.stderr.contains("'minFreeSpace' must be a size such as 500MB or 2GB"), "\(invalid.stderr)")
    }

    @Test("every plugin's mistake in one pass, in file order, each with its line and fix, then the count; validate and run exit 3")
    func everyMistakeAtOnce() async throws {
        let folder = TemporaryDirectory("many-mistakes")
        let config = try writeConfig("""
        version: 1
        session: typos
        backend:
          type: file-stub
          widht: 640
        triggers:
          - type: stdn
          - type: socket
            maximumClients: lots
        sinks:
          - type: files
            sidecars: sometimes
          - type: comand
        """, in: folder)
        for command in [["validate", config], ["run", "--config", config]] {
            // No input: neither reads any before the config is checked, and a line written
            // to one that already exited would be a broken pipe, not a finding.
            let outcome = try await shutterpipe(command, in: folder.path)
            #expect(outcome.status == 3, "\(command): \(outcome.stderr)")
            let errors = outcome.stderr.split(separator: "\n").filter { $0.hasPrefix("error: \(config):") }
            let lines = errors.compactMap { Int($0.dropFirst("error: \(config):".count).prefix { $0.isNumber }) }
            #expect(lines == [5, 7, 9, 12, 13], "\(command): \(outcome.stderr)")
            #expect(errors.first?.contains("did you mean 'width'") == true && errors[1].contains("did you mean 'stdin'") == true, "\(errors)")
            #expect(outcome.stderr.contains("5 errors in the config"), "\(outcome.stderr)")
            #expect(outcome.stdout.isEmpty)
        }
    }

    @Test("several mistakes inside one plugin, its nested maps, the coordinator block and the top level: all in one pass, in file order; past 20, the count says how many")
    func everyMistakeInsidePlugins() async throws {
        let folder = TemporaryDirectory("many-mistakes-inside")
        let config = try writeConfig("""
        version: 1
        session: typos
        sesion: x
        backend:
          type: file-stub
          widht: 640
          heigth: 480
        triggers:
          - type: socket
            maximumClients: lots
            pth: /tmp/x.sock
        sinks:
          - type: files
            sidecars: sometimes
            exif:
              Artst: Jane Doe
            minFreeSpace: huge
            filname: x
        coordinator:
          queueLimit: many
          captureTimout: 5s
        """, in: folder)
        let outcome = try await shutterpipe(["validate", config], in: folder.path)
        #expect(outcome.status == 3, "\(outcome.stderr)")
        let errors = outcome.stderr.split(separator: "\n").filter { $0.hasPrefix("error: \(config):") }
        let lines = errors.compactMap { Int($0.dropFirst("error: \(config):".count).prefix { $0.isNumber }) }
        #expect(lines == [3, 6, 7, 10, 11, 14, 16, 17, 18, 20, 21], "\(outcome.stderr)")
        for expected in ["unknown key 'sesion'; did you mean 'session'?", "unknown key 'widht'; did you mean 'width'?",
                         "'maximumClients' must be an integer; got 'lots'", "'sidecars' must be one of", "sink 'files' 'exif': unknown EXIF tag 'Artst'; did you mean 'Artist'?",
                         "'minFreeSpace' must be a size such as 500MB or 2GB; got 'huge'", "unknown key 'filname'; did you mean 'filename'?",
                         "'queueLimit' must be an integer; got 'many'", "unknown key 'captureTimout'; did you mean 'captureTimeout'?"] {
            #expect(errors.contains { $0.contains(expected) }, "\(expected) in \(outcome.stderr)")
        }
        #expect(outcome.stderr.contains("11 errors in the config"), "\(outcome.stderr)")

        // 25 unknown keys in one sink: 20 shown, in file order, and the count says so.
        let many = (1...25).map { "    typo\($0): x" }.joined(separator: "\n")
        let crowded = try writeConfig("version: 1\nbackend: {type: file-stub}\ntriggers: [{type: stdin}]\nsinks:\n  - type: files\n\(many)\n",
                                      in: folder, name: "crowded.yaml")
        let capped = try await shutterpipe(["validate", crowded], in: folder.path)
        #expect(capped.status == 3)
        let shown = capped.stderr.split(separator: "\n").filter { $0.hasPrefix("error: \(crowded):") }
        #expect(shown.count == 20 && shown.first?.contains("'typo1'") == true && shown.last?.contains("'typo20'") == true, "\(capped.stderr)")
        #expect(capped.stderr.contains("20 of 25 errors shown: fix these and run again for the rest"), "\(capped.stderr)")
    }

    @Test("an unknown plugin type suggests the closest and says how third-party plugins are loaded")
    func unknownType() async throws {
        let folder = TemporaryDirectory("unknown-type")
        let config = try writeConfig(stubPipeline(folder.file("out")).replacingOccurrences(of: "type: files", with: "type: manifset"), in: folder)
        let outcome = try await shutterpipe(["validate", config], in: folder.path)
        #expect(outcome.status == 3 && outcome.stderr.contains("unknown sink type 'manifset'") && outcome.stderr.contains("--plugin-path PATH, the config's plugins.paths"),
                "\(outcome.stderr)")
    }

    @Test("SIGINT with more lines piped than read ahead: the lines read are answered, and the log says the rest were not read")
    func interruptReadAhead() async throws {
        let folder = TemporaryDirectory("sigint-ahead")
        // One shot is let through; the next waits at the gate until the signal has come, so
        // most lines are surely unread then.
        let gate = try FileGate(in: folder)
        try gate.release()
        let config = try writeConfig(stubPipeline(folder.file("out"), backend: "  gate: \(gate.path)"), in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path)
        session.send(String(repeating: "capture\n", count: 20))
        await session.waitForOutput("capture 2 waits at the gate")
        session.signal(SIGINT)
        await session.waitForOutput("stopped reading standard input after line ")
        try gate.release(20)
        let outcome = await session.wait(timeout: .seconds(60))
        let answered = outcome.lines.filter { $0.hasPrefix("photoSuccess") }.count
        #expect(outcome.status == 0 && answered >= 1 && answered < 20, "\(outcome.stdout)")
        #expect(outcome.stderr.contains("stopped reading standard input after line ") && outcome.stderr.contains("the lines after it are not taken"), "\(outcome.stderr)")
        // Every line that was read got its answer: none dropped silently.
        let read = Int(outcome.stderr.components(separatedBy: "stopped reading standard input after line ").last?.prefix { $0.isNumber } ?? "") ?? -1
        #expect(read == outcome.lines.count, "read \(read) lines, answered \(outcome.lines.count)")
    }

    @Test("--log-format json writes one JSON object per line with the event fields")
    func jsonLogs() async throws {
        let folder = TemporaryDirectory("json")
        let config = try writeConfig(stubPipeline(folder.file("out")), in: folder)
        let outcome = try await shutterpipe(["run", "--config", config, "--log-format", "json"], input: "capture\n", in: folder.path)
        let records = try outcome.stderr.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String])
        }
        let capture = try #require(records.first { $0["event"] == "capture" })
        #expect(capture["state"] == "photoSuccess")
        #expect(capture["trigger"] == "stdin")
        #expect(capture["files"] == "\(folder.file("out"))/e2e-0001.jpg")
        #expect(Double(capture["ms"] ?? "") != nil)
        #expect(records.allSatisfy { $0["time"] != nil && $0["level"] != nil && $0["source"] != nil })
    }

    @Test("SIGTERM finishes what is queued and exits 0")
    func sigterm() async throws {
        let folder = TemporaryDirectory("sigterm")
        let config = try writeConfig(stubPipeline(folder.file("out"), backend: "  latency: 100ms"), in: folder)
        let running = try await RunningProcess.start(["run", "--config", config], in: folder.path)
        running.send("enter\ncapture\ncapture\ncapture\n")
        _ = await eventually { running.stdoutSoFar.contains("photoSuccess") }
        running.signal(SIGTERM)
        let outcome = await running.wait(timeout: .seconds(60))
        running.closeInput()
        #expect(outcome.status == 0, "\(outcome.stderr)")
        // Every event read was answered; lines still in the pipe were never events.
        let stored = outcome.lines.filter { $0.hasPrefix("photoSuccess") }.count
        #expect(stored >= 1, "\(outcome.stdout)")
        #expect(outcome.lines.allSatisfy { $0.hasPrefix("photoSuccess ") || $0 == "enteredPhotoMode" }, "\(outcome.stdout)")
        #expect(outcome.stderr.contains("SIGTERM: finishing what is queued"))
        #expect(outcome.stderr.contains("pipeline stopped: \(stored) photo(s) stored, 0 failed"))
        #expect(folder.names("out").filter { $0.hasSuffix(".jpg") }.count == stored)
    }

    @Test("a full disk answers photoFailed with the storage cause and leaves no partial file",
          .requiresMountNamespace("it mounts a 96 KiB tmpfs to fill"))
    func diskFull() async throws {
        let folder = TemporaryDirectory("diskfull")
        let mount = folder.file("card")
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        // The catalogue off the 96 KiB disk, which it would fill before the photos.
        let config = try writeConfig(stubPipeline(mount, backend: "  width: 1024\n  height: 768") + "\ncatalogue:\n  path: \(folder.file("catalogue.sqlite"))\n", in: folder)
        // A 96 KiB tmpfs in a mount namespace of its own: a real ENOSPC, root or not.
        let script = "mount -t tmpfs -o size=96k tmpfs \(mount) && \(try shutterpipeBinary()) run --config \(config); ls -a \(mount) >&2"
        let outcome = try await shutterpipe(["-rm", "sh", "-c", script].map { $0 }, input: String(repeating: "capture\n", count: 8),
                                            in: folder.path, via: "/usr/bin/unshare")
        let failures = outcome.lines.filter { $0.hasPrefix("photoFailed") }
        #expect(outcome.lines.filter { $0.hasPrefix("photoSuccess") }.count >= 1, "\(outcome.stdout)\n\(outcome.stderr)")
        #expect(!failures.isEmpty)
        #expect(failures.allSatisfy { $0.hasPrefix("photoFailed storageUnavailable: disk full:") }, "\(failures)")
        #expect(!outcome.stderr.contains(".shutterpipe-tmp-"), "a temporary file was left: \(outcome.stderr)")
    }

    @Test("validate: 0 for a good config, 3 with file:line:column for a bad one")
    func validate() async throws {
        let folder = TemporaryDirectory("validate")
        let good = try writeConfig(stubPipeline(folder.file("out")), in: folder)
        let goodOutcome = try await shutterpipe(["validate", good], in: folder.path)
        #expect(goodOutcome.status == 0)
        #expect(goodOutcome.stdout == "\(good): ok\n")
        let bad = try writeConfig(stubPipeline(folder.file("out")).replacingOccurrences(of: "type: files", with: "type: file"), in: folder, name: "bad.yaml")
        let badOutcome = try await shutterpipe(["validate", bad], in: folder.path)
        #expect(badOutcome.status == 3)
        #expect(badOutcome.stderr.hasPrefix("error: \(bad):9:11: unknown sink type 'file'; did you mean 'files'?"), "\(badOutcome.stderr)")
        let runBad = try await shutterpipe(["run", "--config", bad], in: folder.path)
        #expect(runBad.status == 3)
        #expect(runBad.stdout.isEmpty)
    }
}
