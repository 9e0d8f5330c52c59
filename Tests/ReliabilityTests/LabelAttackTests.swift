#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

/// Case 18: the adversarial pass of issue 41 against labels and names; each failed on the
/// code before its fix (the session trapped, a file went to the wrong folder or to $HOME).
@Suite("fault: hostile labels and names", .serialized, .timeLimit(.minutes(5)))
struct LabelAttackTests {
    /// A session labels reach by the socket, the page and stdin, naming files and folders
    /// after the label, with EXIF tagging (the label goes into XMP as the job identifier).
    static func start(_ folder: TemporaryDirectory, exif: String = "{Artist: Studio}") async throws -> (RunningProcess, UInt16) {
        try FileManager.default.createDirectory(atPath: folder.file("home"), withIntermediateDirectories: true)
        let config = try writeConfig("""
        version: 1
        session: labels
        backend: {type: file-stub, width: 160, height: 120}
        triggers:
          - type: stdin
          - {type: socket, path: \(folder.file("s.sock"))}
          - {type: web, listen: "127.0.0.1:0"}
        sinks:
          - {type: files, directory: "\(folder.file("out"))/{label}", filename: "{label}-{seq:04}.{ext}", exif: \(exif)}
        """, in: folder)
        let process = try await RunningProcess.start(["run", "--config", config, "--verbose", "--no-status"], in: folder.path, environment: ["HOME": folder.file("home")])
        let portOf: @Sendable () -> UInt16? = {
            let log = process.stderrSoFar
            guard let range = log.range(of: "web page at http://127.0.0.1:") else { return nil }
            return UInt16(log[range.upperBound...].prefix { $0.isNumber })
        }
        guard await eventually({ portOf() != nil || !process.isRunning }), let port = portOf() else {
            throw TestSupportError("the session did not start: \(process.stderrSoFar)")
        }
        return (process, port)
    }

    @Test("a 65 KB label of 200 letters with 163 accents each, labels with formatting characters, line separators, a leading combining mark, '~', '.' or '..': refused with the reason by the page, the socket and stdin; the session shoots on, names nothing after them, writes nothing in $HOME")
    func hostileLabels() async throws {
        let folder = TemporaryDirectory("chaos-labels")
        let (session, port) = try await Self.start(folder)
        let heavy = String(repeating: "a" + String(repeating: "\u{301}", count: 163), count: 200)
        #expect(heavy.count == 200 && heavy.utf8.count > 65_000)
        let cases: [(String, String)] = [
            (heavy, "at most 200 bytes of UTF-8"),
            (String(repeating: "\u{65E5}", count: 67), "at most 200 bytes of UTF-8"),  // 201 bytes
            ("ORDER\u{200B}-7", "U+200B, an invisible formatting character"),
            ("\u{202E}gpj.exe", "U+202E, an invisible formatting character"),
            ("A\u{2028}B", "U+2028"),
            ("A\u{85}B", "U+0085"),
            ("\u{301}ORDER-7", "cannot begin with a combining mark (U+0301)"),
            ("~", "'~' is not a label"), (".", "'.' is not a label"), ("..", "'..' is not a label"),
        ]
        for (label, reason) in cases {
            let body = try JSONSerialization.data(withJSONObject: ["label": label])
            let reply = try await http("POST", "/api/label", port: port, body: body)
            #expect(reply.status == 409 && (reply.json?["error"] as? String)?.contains(reason) == true, "page, \(label.prefix(12).debugDescription): \(String(decoding: reply.body, as: UTF8.self).prefix(300))")
        }
        let socket = try await SocketLines(path: folder.file("s.sock"))
        for (index, (label, reason)) in cases.enumerated() {
            let line = String(decoding: try JSONSerialization.data(withJSONObject: ["label": label, "id": index]), as: UTF8.self)
            #expect(await socket.send(line + "\n"))
            let reply = await socket.replies(index + 1).last
            let said = reply?["message"] as? String ?? "\(reply ?? [:])"
            #expect(said.contains(reason), "socket, \(label.prefix(12).debugDescription): \(said.prefix(300))")
        }
        socket.close()
        #expect(session.send("label \(heavy)\n"))
        #expect(session.send("capture\n"))
        await session.waitForOutput(on: .stdout, "the shot's answer") { $0.contains("photoSuccess") }
        // A label of 200 bytes is taken, and names the next shot's folder and file.
        let fine = String(repeating: "7", count: 200)
        #expect(try await http("POST", "/api/label", port: port, body: try JSONSerialization.data(withJSONObject: ["label": fine])).status == 200)
        #expect(session.send("capture\n"))
        await session.waitForOutput(on: .stdout, "the second answer") { count("photoSuccess", in: $0) >= 2 }
        session.signal(SIGTERM)
        let outcome = await session.wait(timeout: .seconds(30))
        #expect(outcome.status == 0, "\(outcome.stderr.suffix(2000))")
        // A value is at most 100 bytes in a name.
        let named = String(fine.prefix(100))
        let visible = { (path: String) in folder.names(path).filter { !$0.hasPrefix(".") } }
        #expect(Set(visible("out")) == [named, "nolabel"], "\(folder.names("out"))")
        #expect(visible("out/\(named)") == ["\(named)-0001.jpg"])
        #expect(visible("out/nolabel") == ["nolabel-0001.jpg"], "\(folder.names("out/nolabel"))")
        #expect(folder.names("home").isEmpty, "written into $HOME: \(folder.names("home"))")
        #expect(!outcome.stderr.contains("\u{202E}"), "a formatting character reached the log")
    }

    @Test("metadata too large for a JPEG segment (a 70 KB description with a label): the photo is stored whole, its metadata in a sidecar, with a warning; no trap")
    func oversizeMetadata() async throws {
        let folder = TemporaryDirectory("chaos-segment")
        let description = String(repeating: "Ünïcödé description ", count: 3_500)
        let (session, _) = try await Self.start(folder, exif: "{Artist: Studio, ImageDescription: \"\(description)\"}")
        #expect(session.send("label ORDER-1\n"))
        #expect(session.send("capture\n"))
        await session.waitForOutput(on: .stdout, "the shot's answer") { $0.contains("photo") }
        session.signal(SIGTERM)
        let outcome = await session.wait(timeout: .seconds(30))
        #expect(outcome.status == 0 && outcome.stdout.contains("photoSuccess"), "\(outcome.stdout) \(outcome.stderr.suffix(1500))")
        #expect(outcome.stderr.contains("over the 65504 a JPEG segment holds") || outcome.stderr.contains("over the 65527 a JPEG segment holds"), "\(outcome.stderr.suffix(1500))")
        let names = folder.names("out/ORDER-1")
        #expect(names.contains("ORDER-1-0001.jpg") && names.contains { $0.hasSuffix(".xmp") }, "\(names)")
        let sidecar = try String(contentsOfFile: folder.file("out/ORDER-1/\(names.first { $0.hasSuffix(".xmp") } ?? "")"), encoding: .utf8)
        #expect(sidecar.contains("Ünïcödé description"))
    }
}
