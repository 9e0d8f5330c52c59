#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeKit
import SocketTrigger
import TestSupport
import Testing

/// A running `shutterpipe run` with a socket trigger and the file-stub backend.
func socketSession(_ folder: TemporaryDirectory, backend: String = "", coordinator: String = "", trigger: String = "",
                   arguments: [String] = []) async throws -> (RunningProcess, String) {
    let path = folder.file("s.sock")
    let config = try writeConfig("""
    version: 1
    session: socket
    backend:
      type: file-stub
    \(backend)
    triggers:
      - type: socket
        path: \(path)
    \(trigger)
    sinks:
      - type: files
        directory: \(folder.file("out"))
    \(coordinator)
    """, in: folder)
    let process = try await RunningProcess.start(["run", "--config", config] + arguments, in: folder.path)
    // Ready when it accepts a connection (a stale socket file may already be there).
    let ready = await eventually(timeout: .seconds(30)) {
        let probe = connectUnixSocket(path)
        if probe >= 0 { close(probe) }
        return probe >= 0 || !process.isRunning
    }
    guard ready, process.isRunning else { throw TestSupportError("the socket session did not start\n\(process.lastLines())") }
    return (process, path)
}

@Suite("socket trigger", .timeLimit(.minutes(2)))
struct SocketTriggerTests {
    @Test("shutterpipe trigger sends the session's aliases; a name the session does not know exits 1 and says so")
    func clientAliases() async throws {
        let folder = TemporaryDirectory("socket-alias")
        let (session, path) = try await socketSession(folder, trigger: "    map: {shoot: capture, enter: enter, exit: exit}")
        let shot = try await shutterpipe(["trigger", "shoot", "--socket", path], in: folder.path)
        #expect(shot.status == 0 && shot.stdout.hasPrefix("photoSuccess "), "\(shot.stdout) \(shot.stderr)")
        let unknown = try await shutterpipe(["trigger", "jump", "--socket", path], in: folder.path)
        #expect(unknown.status == 1 && unknown.stderr.contains("the session does not know 'jump'"), "\(unknown.stdout) \(unknown.stderr)")
        // capture is not in this map: the session does not take it either.
        let plain = try await shutterpipe(["trigger", "capture", "--socket", path], in: folder.path)
        #expect(plain.status == 1 && plain.stderr.contains("does not know 'capture'"))
        session.signal(SIGTERM)
        #expect(await session.wait().status == 0)
    }

    @Test("shutterpipe trigger prints the answering state and exits 0 only on success")
    func clientCommand() async throws {
        let folder = TemporaryDirectory("socket-client")
        let (session, path) = try await socketSession(folder, backend: "  failEvery: 2")
        let first = try await shutterpipe(["trigger", "capture", "--socket", path], in: folder.path)
        #expect(first.status == 0)
        #expect(first.stdout == "photoSuccess \(folder.file("out"))/socket-0001.jpg\n")
        let second = try await shutterpipe(["trigger", "capture", "--socket", path], in: folder.path)
        #expect(second.status == 1)
        #expect(second.stdout.hasPrefix("photoFailed cameraFailure: file-stub: simulated failure of capture 2"))
        let exit = try await shutterpipe(["trigger", "exit", "--socket", path], in: folder.path)
        #expect(exit.status == 0 && exit.stdout == "exitedOrUnableToEnter\n")
        session.signal(SIGTERM)
        let outcome = await session.wait()
        #expect(outcome.status == 4)  // some events failed, by design: exit 4
        #expect(!FileManager.default.fileExists(atPath: path))  // removed at shutdown
        let none = try await shutterpipe(["trigger", "capture", "--socket", path], in: folder.path)
        #expect(none.status == 1)
        #expect(none.stderr.contains("no shutterpipe session listens on \(path)"))
    }

    @Test("the socket is 0600; malformed lines get an error reply and the session carries on; ids are echoed")
    func requestsAndErrors() async throws {
        let folder = TemporaryDirectory("socket-requests")
        let (session, path) = try await socketSession(folder)
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        let client = try await SocketLines(path: path)
        await client.send("garbage\n{\"evnt\":1}\n\u{0}\u{1}\n{\"event\":\"capture\",\"id\":\"a\"}\n{\"event\":\"selfie\",\"id\":5}\n")
        let replies = await client.replies(5)
        #expect(replies.filter { $0["error"] != nil }.count == 3)
        let capture = try #require(replies.first { $0["id"] as? String == "a" })
        #expect(capture["state"] as? String == "photoSuccess")
        #expect((capture["files"] as? [String])?.first?.hasSuffix("socket-0001.jpg") == true)
        let unknown = try #require(replies.first { $0["id"] as? Int == 5 })
        #expect(unknown["event"] as? String == "unknown" && unknown["state"] as? String == "enteredPhotoMode")
        session.signal(SIGTERM)
        #expect(await session.wait().status == 0)
    }

    @Test("many clients at once each get exactly their own answers")
    func manyClients() async throws {
        let folder = TemporaryDirectory("socket-clients")
        let (session, path) = try await socketSession(folder, coordinator: "coordinator: {queueLimit: 100}")
        var clients: [SocketLines] = []
        for index in 0..<8 { clients.append(try await SocketLines(path: path)); _ = index }
        for (index, client) in clients.enumerated() {
            await client.send((0..<5).map { "{\"event\":\"capture\",\"id\":\"c\(index)-\($0)\"}\n" }.joined())
        }
        for (index, client) in clients.enumerated() {
            let replies = await client.replies(5)
            #expect(replies.count == 5)
            #expect(Set(replies.compactMap { $0["id"] as? String }) == Set((0..<5).map { "c\(index)-\($0)" }))
            #expect(replies.allSatisfy { $0["state"] as? String == "photoSuccess" })
        }
        session.signal(SIGTERM)
        #expect(await session.wait().status == 0)
        #expect(folder.names("out").filter { $0.hasSuffix(".jpg") }.count == 40)
    }

    @Test("a live socket is not taken over; a stale one is replaced")
    func staleAndLive() async throws {
        let folder = TemporaryDirectory("socket-stale")
        let (session, path) = try await socketSession(folder)
        let second = try await shutterpipe(["run", "--config", folder.file("studio.yaml")], in: folder.path, timeout: .seconds(60))
        #expect(second.status == 1)
        #expect(second.stderr.contains("another program already listens on '\(path)'"))
        session.signal(SIGKILL)  // leaves the socket file behind
        _ = await session.wait()
        #expect(FileManager.default.fileExists(atPath: path))
        let (again, _) = try await socketSession(folder)
        #expect(try await shutterpipe(["trigger", "capture", "--socket", path], in: folder.path).status == 0)
        again.signal(SIGTERM)
        _ = await again.wait()
    }

    @Test("a storm of 1,000 captures: exactly one answer each, busy beyond the bound, nothing lost or duplicated, memory bounded")
    func storm() async throws {
        let folder = TemporaryDirectory("socket-storm")
        let (session, path) = try await socketSession(folder, backend: "  width: 64\n  height: 48", coordinator: "coordinator: {queueLimit: 16}")
        let clients = [try await SocketLines(path: path), try await SocketLines(path: path), try await SocketLines(path: path), try await SocketLines(path: path)]
        for (index, client) in clients.enumerated() {
            await client.send((0..<250).map { "{\"event\":\"capture\",\"id\":\(index * 1000 + $0)}\n" }.joined())
        }
        var replies: [[String: Any]] = []
        for client in clients { replies += await client.replies(250, timeout: .seconds(60)) }
        #expect(replies.count == 1000)
        let ids = replies.compactMap { $0["id"] as? Int }
        #expect(Set(ids).count == 1000)  // exactly one answer per request
        let successes = replies.filter { $0["state"] as? String == "photoSuccess" }
        let busy = replies.filter { $0["cause"] as? String == "busy" }
        #expect(successes.count + busy.count == 1000, "other answers: \(replies.filter { $0["state"] as? String != "photoSuccess" && $0["cause"] as? String != "busy" }.prefix(3))")
        #expect(successes.count >= 16)  // at least the bound: 16 wait before the first is taken
        let files = successes.flatMap { $0["files"] as? [String] ?? [] }
        #expect(Set(files).count == successes.count)  // no file named twice
        #expect(folder.names("out").filter { $0.hasSuffix(".jpg") }.count == successes.count)  // none lost, none extra
        let status = try String(contentsOfFile: "/proc/\(session.pid)/status", encoding: .utf8)
        let peak = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        #expect(peak > 0 && peak < 200_000, "peak resident memory \(peak) kB")
        session.signal(SIGTERM)
        #expect(await session.wait().status == (busy.isEmpty ? 0 : 4))  // 4: the queue refused some (busy)
    }
}

@Suite("socket trigger: settings requests")
struct SocketSettingsRequestTests {
    func parse(_ line: String) -> SocketRequest.Parsed { SocketRequest.parse(Data(line.utf8)) }

    @Test("set as an object (in key order, numbers and booleans as text) or a list of KEY=VALUE (in its order); get as a list, a name, or [] for all; camera and id kept")
    func forms() {
        #expect(parse(#"{"set":{"shutterspeed":"1/200","iso":400},"camera":"A","id":7}"#)
            == .settings(.change([SettingChange(key: "iso", value: "400"), SettingChange(key: "shutterspeed", value: "1/200")]), camera: "A", id: .integer(7)))
        #expect(parse(#"{"set":["shutterspeed=1/200","iso=400"]}"#)
            == .settings(.change([SettingChange(key: "shutterspeed", value: "1/200"), SettingChange(key: "iso", value: "400")]), camera: nil, id: nil))
        #expect(parse(#"{"set":{"autofocus":true}}"#) == .settings(.change([SettingChange(key: "autofocus", value: "1")]), camera: nil, id: nil))
        #expect(parse(#"{"get":[]}"#) == .settings(.read([]), camera: nil, id: nil))
        #expect(parse(#"{"get":"iso","id":"x"}"#) == .settings(.read(["iso"]), camera: nil, id: .string("x")))
        #expect(parse(#"{"get":["iso","aperture"]}"#) == .settings(.read(["iso", "aperture"]), camera: nil, id: nil))
        #expect(parse(#"{"event":"capture"}"#) == .event("capture", id: nil))
    }

    @Test("malformed settings requests get an error reply naming the form, with the id")
    func rejections() {
        func error(_ line: String) -> String? {
            if case .rejected(let reply) = parse(line) { return reply.error }
            return nil
        }
        #expect(error(#"{"set":"iso=400","id":1}"#)?.hasPrefix(#""set" takes an object such as {"iso":"400"} or a list"#) == true)
        #expect(error(#"{"set":{}}"#)?.hasSuffix("it names no setting") == true)
        #expect(error(#"{"set":["iso"]}"#)?.hasPrefix(#""set" takes"#) == true)
        #expect(error(#"{"set":{"iso":null}}"#)?.hasSuffix("'iso' has no value") == true)
        #expect(error(#"{"get":5}"#)?.hasPrefix(#""get" takes a list of setting names"#) == true)
        #expect(error(#"{"get":["iso",3]}"#)?.hasPrefix(#""get" takes a list of setting names"#) == true)
        #expect(error(#"{"set":{"iso":"400"},"camera":3}"#) == #""camera" must be a camera's name (a string)"#)
        #expect(error(#"{"id":2}"#)?.contains(#"{"set":{"iso":"400"}}"#) == true)
        if case .rejected(let reply) = parse(#"{"set":"iso","id":9}"#) { #expect(reply.id == .integer(9)) } else { Issue.record("not rejected") }
    }
}
