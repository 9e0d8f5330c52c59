#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

/// Case 19: the adversarial pass of issue 41 against the upload sink's secrets; it failed
/// on the code before its fix (the password on rclone's argv, a 0644 journal in a 0755
/// folder, password2, key_pem and sas_url in the catalogue and the page's replies).
@Suite("fault: upload secrets", .timeLimit(.minutes(4)))
struct UploadSecretTests {
    @Test("an inline remote's secrets reach rclone through its environment, never argv; the queue is 0600 in a folder made 0700; the log, the catalogue, `shots` and /api/shots show every secret masked; the files arrive")
    func secretsStayPrivate() async throws {
        let server = try await RcloneServer(.webdav, "secrets")
        let folder = TemporaryDirectory("chaos-upload-secrets")
        let queue = folder.file("queue")
        try FileManager.default.createDirectory(atPath: queue, withIntermediateDirectories: true)
        chmod(queue, 0o755)  // as an older version, or the user, left it
        // rclone as a wrapper that writes down what every local user could see of it.
        let wrapper = folder.file("rclone-seen")
        try """
        #!/bin/sh
        printf '%s\\n' "$*" >> '\(folder.file("argv.log"))'
        [ -n "$RCLONE_CONFIG_SHUTTERPIPEINLINE_PASS" ] && echo given >> '\(folder.file("env.log"))'
        exec /usr/bin/rclone "$@"
        """.writeTestFile(wrapper)
        chmod(wrapper, 0o755)
        let secrets = [server.obscured, "PW2-SECRET-1", "PEM-SECRET-2", "SAS-SECRET-3"]
        let remote = ":webdav,url='http://127.0.0.1:\(server.port)',user=\(RcloneServer.user),pass=\(secrets[0]),password2=\(secrets[1]),key_pem=\(secrets[2]),sas_url='https://account.example/c?sv=1&sig=\(secrets[3])':shots"
        let config = try writeConfig("""
        version: 1
        session: secrets
        backend: {type: file-stub, width: 320, height: 240}
        triggers:
          - type: stdin
          - {type: web, listen: "127.0.0.1:0"}
        sinks:
          - {type: files, directory: \(folder.file("out")), filename: "{session}-{seq:04}.{ext}"}
          - {type: upload, queueFolder: \(queue), rclone: \(wrapper), remote: "\(remote)"}
        """, in: folder)
        let session = try await RunningProcess.start(["run", "--config", config, "--verbose", "--no-status"], in: folder.path)
        for number in 1...3 {
            session.send("capture\n")
            await session.waitForOutput(on: .stdout, "answer \(number)") { count("photoSuccess", in: $0) >= number }
        }
        #expect(await eventually { server.files().keys.filter { $0.hasPrefix("shots/") }.count == 3 }, "\(server.files().keys.sorted())")
        let portOf: @Sendable () -> UInt16? = {
            let log = session.stderrSoFar
            return log.range(of: "web page at http://127.0.0.1:").flatMap { UInt16(log[$0.upperBound...].prefix { $0.isNumber }) }
        }
        #expect(await eventually { portOf() != nil || !session.isRunning }, "the web trigger did not start: \(session.stderrSoFar)")
        let port = try #require(portOf())
        // Copies are recorded once uploaded: wait for all three before looking.
        #expect(await eventually {
            let reply = try? await http("GET", "/api/shots", port: port)
            return String(decoding: reply?.body ?? Data(), as: UTF8.self).components(separatedBy: ":webdav,").count - 1 >= 3
        })
        let page = String(decoding: try await http("GET", "/api/shots", port: port).body, as: UTF8.self)
        session.signal(SIGTERM)
        let outcome = await session.wait(timeout: .seconds(60))
        #expect(outcome.status == 0)
        let listed = try await shutterpipe(["shots", "--config", config, "--json"], in: folder.path).stdout
        let argv = (try? String(contentsOfFile: folder.file("argv.log"), encoding: .utf8)) ?? ""
        let journal = try FileManager.default.contentsOfDirectory(atPath: queue).filter { $0.hasPrefix("queue-") }
        for secret in secrets {
            #expect(!argv.contains(secret), "argv: \(argv)")
            #expect(!outcome.stderr.contains(secret), "log")
            #expect(!page.contains(secret), "/api/shots: \(page.prefix(1500))")
            #expect(!listed.contains(secret), "shots --json")
        }
        #expect(argv.contains("shutterpipeinline:shots") && !argv.contains("pass="), "\(argv)")
        let given = (try? String(contentsOfFile: folder.file("env.log"), encoding: .utf8)) ?? ""
        #expect(!given.isEmpty && given.split(separator: "\n").count == argv.split(separator: "\n").count, "every run had its password in its environment")
        #expect(page.contains("pass=…") && page.contains("password2=…") && page.contains("key_pem=…") && page.contains("sas_url=…"), "\(page.prefix(1500))")
        var info = stat()
        #expect(stat(queue, &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(journal.count == 1)
        #expect(stat("\(queue)/\(journal.first ?? "")", &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(outcome.stderr.contains("made the queue folder '\(queue)' private (0700)"))
    }

    @Test("a camera whose name begins with a combining mark (U+0301): its 8 shots are stored in its own folder, all 8 mirrored and uploaded under their own names, and marked through the running session")
    func leadingCombiningMark() async throws {
        let server = try await RcloneServer(.webdav, "combining")
        let folder = TemporaryDirectory("chaos-combining")
        let camera = "\u{301}ORDER-7"
        try FileManager.default.createDirectory(atPath: folder.file("mirror"), withIntermediateDirectories: true)
        let config = try writeConfig("""
        version: 1
        session: marks
        backend: {type: file-stub, width: 160, height: 120, camera: "\(camera)"}
        triggers:
          - type: stdin
          - {type: socket, path: \(folder.file("s.sock"))}
        sinks:
          - {type: files, directory: "\(folder.file("out"))", filename: "{camera}/{camera}-{seq:04}.{ext}", mirror: [\(folder.file("mirror"))]}
          - {type: upload, queueFolder: \(folder.file("queue")), remote: "\(server.remote("shots"))"}
        """, in: folder)
        let session = try await RunningProcess.start(["run", "--config", config, "--verbose", "--no-status"], in: folder.path)
        for number in 1...8 {
            session.send("capture\n")
            await session.waitForOutput(on: .stdout, "answer \(number)") { count("photoSuccess", in: $0) >= number }
        }
        let expected = Set((1...8).map { "shots/\(camera)-\(String(format: "%04d", $0)).jpg" })
        #expect(await eventually { Set(server.files().keys) == expected }, "\(server.files().keys.sorted())")
        #expect(folder.names("out").filter { !$0.hasPrefix(".") } == [camera], "\(folder.names("out"))")
        // Its mirror copies too, in the same layout (a prefix compared by grapheme lost them).
        #expect(await eventually { folder.names("mirror/\(camera)").filter { $0.hasSuffix(".jpg") }.count == 8 }, "\(folder.names("mirror"))")
        await session.waitForOutput("8 shots recorded") { shotsRecorded(in: $0) >= 8 }
        for id in 1...8 {
            let rated = try await shutterpipe(["shots", "rate", String(id), "3", "--socket", folder.file("s.sock")], in: folder.path)
            #expect(rated.status == 0, "\(rated.stdout) \(rated.stderr)")
        }
        session.signal(SIGTERM)
        let outcome = await session.wait(timeout: .seconds(60))
        #expect(outcome.status == 0 && !outcome.stderr.contains("still queued"), "\(outcome.stderr.suffix(1500))")
        let sidecars = folder.names("out/\(camera)").filter { $0.hasSuffix(".xmp") }
        #expect(sidecars.count == 8, "\(folder.names("out/\(camera)"))")
        for sidecar in sidecars {
            #expect((try? String(contentsOfFile: folder.file("out/\(camera)/\(sidecar)"), encoding: .utf8))?.contains("xmp:Rating=\"3\"") == true)
        }
    }
}
