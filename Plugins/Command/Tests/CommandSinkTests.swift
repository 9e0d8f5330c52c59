import Foundation
import TestSupport
import Testing

/// A pipeline with a files sink and a command sink running `command`.
func hookPipeline(_ folder: TemporaryDirectory, command: String, extra: String = "", backend: String = "") throws -> String {
    try writeConfig("""
    version: 1
    session: hooks
    backend:
      type: file-stub
    \(backend)
    triggers:
      - type: stdin
    sinks:
      - type: files
        directory: \(folder.file("out"))
      - type: command
        command: \(command)
    \(extra)
    """, in: folder)
}

func script(_ body: String, in folder: TemporaryDirectory, name: String = "hook.sh") throws -> String {
    let path = folder.file(name)
    try "#!/bin/sh\n\(body)\n".writeTestFile(path)
    chmod(path, 0o755)
    return path
}

@Suite("command sink (hooks)", .timeLimit(.minutes(2)))
struct CommandSinkTests {
    @Test("a gphoto2 --hook-script runs unchanged: ACTION and ARGUMENT as gphoto2 sets them, plus the new actions")
    func gphoto2Compatible() async throws {
        let folder = TemporaryDirectory("hook-compat")
        let log = folder.file("hook.log")
        // The shape of the hook scripts gphoto2 users have.
        let hook = try script("""
        case "$ACTION" in
          init) echo "init" >> \(log) ;;
          start) echo "start" >> \(log) ;;
          download) echo "download $ARGUMENT $(wc -c < "$ARGUMENT")" >> \(log) ;;
          stop) echo "stop" >> \(log) ;;
          *) echo "$ACTION state=$SHUTTERPIPE_STATE cause=$SHUTTERPIPE_CAUSE shot=$SHUTTERPIPE_SHOT session=$SHUTTERPIPE_SESSION" >> \(log) ;;
        esac
        """, in: folder)
        let config = try hookPipeline(folder, command: "[\(hook)]", backend: "  failEvery: 3")
        let outcome = try await shutterpipe(["run", "--config", config], input: "enter\ncapture\ncapture\ncapture\nexit\n", in: folder.path)
        #expect(outcome.status == 4, "\(outcome.stderr)")  // some events failed, by design: exit 4
        let lines = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        let out = folder.file("out")
        let sizes = try [1, 2].map { try FileManager.default.attributesOfItem(atPath: "\(out)/hooks-000\($0).jpg")[.size] as! Int }
        #expect(lines == [
            "init", "start", "download \(out)/hooks-0001.jpg \(sizes[0])", "download \(out)/hooks-0002.jpg \(sizes[1])",
            "failed state=photoFailed cause=cameraFailure shot=3 session=hooks", "exit state=exitedOrUnableToEnter cause= shot= session=hooks", "stop",
        ])
    }

    @Test("the program runs with argv and no shell; its output goes to the log")
    func noShell() async throws {
        let folder = TemporaryDirectory("hook-argv")
        let marker = folder.file("not-created")
        let config = try hookPipeline(folder, command: "[/bin/echo, \"hello; touch \(marker)\", \"$ACTION\"]", extra: "    actions: [download]")
        let outcome = try await shutterpipe(["run", "--config", config], input: "capture\n", in: folder.path)
        #expect(outcome.stderr.contains("hook /bin/echo (download): hello; touch \(marker) $ACTION"))
        #expect(!FileManager.default.fileExists(atPath: marker))
    }

    @Test("a failing hook is a warning by default; with failPhoto the photo fails")
    func failingHook() async throws {
        let folder = TemporaryDirectory("hook-fail")
        let hook = try script("echo broken >&2\nexit 3", in: folder)
        let warn = try await shutterpipe(["run", "--config", try hookPipeline(folder, command: "[\(hook)]", extra: "    actions: [download]")],
                                         input: "capture\n", in: folder.path)
        #expect(warn.lines.first?.hasPrefix("photoSuccess") == true)
        #expect(warn.lines.first?.contains("(warning: hook \(hook) exited with 3)") == true, "\(warn.stdout)")
        #expect(warn.stderr.contains("hook \(hook) (download): broken"))
        let strict = try await shutterpipe(["run", "--config", try hookPipeline(folder, command: "[\(hook)]", extra: "    actions: [download]\n    failPhoto: true")],
                                           input: "capture\n", in: folder.path)
        #expect(strict.lines.first?.hasPrefix("photoFailed unexpected: hook \(hook) exited with 3") == true, "\(strict.stdout)")
    }

    @Test("a files sink with a relative directory (captures, no ./) hands its files to the hook; with no file to run for, failPhoto fails the photo")
    func relativeDirectory() async throws {
        let folder = TemporaryDirectory("hook-relative")
        let log = folder.file("hook.log")
        let hook = try script("echo \"$ARGUMENT $(wc -c < \"$ARGUMENT\")\" >> \(log)", in: folder)
        let config = try writeConfig("""
        version: 1
        session: hooks
        backend: {type: file-stub}
        triggers: [{type: stdin}]
        sinks:
          - {type: files, directory: captures}
          - {type: command, command: [\(hook)], actions: [download], failPhoto: true}
        """, in: folder)
        let outcome = try await shutterpipe(["run", "--config", config], input: "capture\ncapture\n", in: folder.path)
        #expect(outcome.lines.filter { $0.hasPrefix("photoSuccess") }.count == 2, "\(outcome.stdout) \(outcome.stderr)")
        let lines = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        let sizes = try [1, 2].map { try FileManager.default.attributesOfItem(atPath: folder.file("captures/hooks-000\($0).jpg"))[.size] as! Int }
        #expect(lines == ["captures/hooks-0001.jpg \(sizes[0])", "captures/hooks-0002.jpg \(sizes[1])"], "\(outcome.stderr)")

        // Nothing stored the photo as a file: with failPhoto, the photo fails and says why.
        let alone = try writeConfig("""
        version: 1
        backend: {type: file-stub}
        triggers: [{type: stdin}]
        sinks: [{type: command, command: [\(hook)], actions: [download], failPhoto: true}]
        """, in: folder, name: "alone.yaml")
        let failed = try await shutterpipe(["run", "--config", alone], input: "capture\n", in: folder.path)
        #expect(failed.lines.first?.hasPrefix("photoFailed unexpected: hook \(hook) has no file to run for: no earlier sink stored the photo") == true,
                "\(failed.stdout)")
    }

    @Test("a hook that hangs is killed at its timeout")
    func timeout() async throws {
        let folder = TemporaryDirectory("hook-timeout")
        let hook = try script("sleep 600", in: folder)
        let outcome = try await shutterpipe(["run", "--config", try hookPipeline(folder, command: "[\(hook)]", extra: "    actions: [download]\n    timeout: 300ms"),
                                             "--log-format", "json"],
                                            input: "capture\n", in: folder.path, timeout: .seconds(60))
        // The sinks' time for the shot, from the session's own log: the 600 s hook was cut
        // off. (A hook waited for would also make the run outlast its 60 s deadline.)
        let answer = outcome.stderr.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .first { $0["event"] as? String == "capture" && $0["trigger"] != nil }
        let storeMs = (answer?["storeMs"] as? String).flatMap(Double.init)
        #expect(storeMs.map { $0 < 10_000 } == true, "storeMs \(String(describing: storeMs)): \(outcome.stderr.suffix(2000))")
        #expect(outcome.lines.first?.contains("(warning: hook \(hook) timed out after 300 ms)") == true, "\(outcome.stdout)")
    }

    @Test("a hook that leaves a background job costs nothing per photo and leaks nothing; its own output still reaches the log")
    func backgroundJob() async throws {
        let folder = TemporaryDirectory("hook-daemon")
        let pids = folder.file("daemons")
        // The daemon keeps the hook's stdout and stderr open for a minute.
        let hook = try script("sleep 60 &\necho $! >> \(pids)\necho \"stored $ARGUMENT\"", in: folder)
        let config = try hookPipeline(folder, command: "[\(hook)]", extra: "    actions: [download]")
        let session = try await RunningProcess.start(["run", "--config", config, "--log-format", "json"], in: folder.path)
        defer {
            let daemons = ((try? String(contentsOfFile: pids, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { pid_t($0) }
            daemons.forEach { kill($0, SIGKILL) }
        }
        @Sendable func resources() -> (threads: Int, descriptors: Int) {
            let status = (try? String(contentsOfFile: "/proc/\(session.pid)/status", encoding: .utf8)) ?? ""
            let threads = status.split(separator: "\n").first { $0.hasPrefix("Threads:") }.flatMap { Int($0.split(separator: "\t").last ?? "") } ?? -1
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(session.pid)/fd").count) ?? -1
            return (threads, descriptors)
        }
        var afterThird = (threads: 0, descriptors: 0)
        for shot in 1...20 {
            session.send("capture\n")
            let answered = await eventually(timeout: .seconds(30)) { session.stdoutSoFar.split(separator: "\n").count >= shot }
            #expect(answered, "shot \(shot): \(session.stderrSoFar.suffix(2000))")
            if shot == 3 { afterThird = resources() }
        }
        // Work still under way (the catalogue reading the last photo for its digest) holds a
        // descriptor for a moment; a leaked one never goes.
        let before = afterThird
        _ = await eventually(timeout: .seconds(30)) { resources().descriptors <= before.descriptors }
        let afterTwentieth = resources()
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(60))
        // End of input ends the session: 20 photos, then the exit's answer.
        #expect(outcome.lines.count == 21 && outcome.lines.prefix(20).allSatisfy { $0.hasPrefix("photoSuccess") && !$0.contains("warning") },
                "\(outcome.stdout)")
        // The sinks' time per shot, from the session's own log. Waiting for the daemon to
        // close the pipes would cost two seconds or more per photo.
        let storeMs = outcome.stderr.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["event"] as? String == "capture" && $0["trigger"] != nil }
            .compactMap { ($0["storeMs"] as? String).flatMap(Double.init) }.sorted()
        // A hook waited for until its daemon ends costs the daemon's 60 s a photo; under half
        // of it, every time, is not waiting (speed itself is measured elsewhere: a store is
        // tens of milliseconds, a second on a machine whose cores are all busy).
        #expect(storeMs.count == 20 && storeMs.allSatisfy { $0 < 30_000 }, "storeMs \(storeMs)")
        #expect(afterTwentieth.descriptors <= afterThird.descriptors, "descriptors \(afterThird.descriptors) after shot 3, \(afterTwentieth.descriptors) after shot 20")
        #expect(afterTwentieth.threads <= afterThird.threads + 2, "threads \(afterThird.threads) after shot 3, \(afterTwentieth.threads) after shot 20")
        // What the hook itself printed before it exited is in the log, for every photo.
        #expect(outcome.stderr.components(separatedBy: "stored \(folder.file("out"))/hooks-").count == 21, "\(outcome.stderr.suffix(3000))")
    }

    @Test("config mistakes are errors with the fix")
    func configErrors() async throws {
        let folder = TemporaryDirectory("hook-config")
        let missing = try await shutterpipe(["validate", try hookPipeline(folder, command: "[]")], in: folder.path)
        #expect(missing.stderr.contains("needs 'command', the program and its arguments as a list"))
        let action = try await shutterpipe(["validate", try hookPipeline(folder, command: "[/bin/true]", extra: "    actions: [download, snap]")], in: folder.path)
        #expect(action.stderr.contains("unknown action 'snap'; actions: init, start, download, failed, exit, stop"))
    }
}
