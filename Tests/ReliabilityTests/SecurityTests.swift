#if canImport(Glibc)
import Glibc
#endif
@testable import FilesSink
import Foundation
import ShutterPipeKit
import TestSupport
import Testing

/// Case 8: what a camera, a config or a local user could do on purpose.
@Suite("fault: security")
struct SecurityTests {
    /// Every file below `path`, relative to it.
    func tree(_ path: String) -> Set<String> {
        Set((FileManager.default.enumerator(atPath: path)?.allObjects as? [String]) ?? [])
    }

    @Test("camera-provided names never write outside the folder: ../, absolute names, NUL, control characters, very long names",
          arguments: ["{name}.{ext}", "{camera}/{name}.{ext}", "{session}/{seq:04}-{name}-{camera}.{ext}"])
    func hostileCameraNames(filename: String) async throws {
        let root = TemporaryDirectory("chaos-names")
        let output = root.file("shoot/out")
        let sink = FilesSink(options: try FilesSink.Options(directory: output, filename: filename))
        let names = ["../../escape.jpg", "/etc/evil.jpg", "..", ".", "a\u{0}b.jpg", "line\nbreak.jpg", "..\\..\\win.jpg", "sub/../../x.JPG",
                     String(repeating: "n", count: 300) + ".jpg", String(repeating: "é", count: 200) + ".jpg", String(repeating: "📷", count: 120) + ".jpg",
                     "\u{202E}gpj.exe", "~/home.jpg", "$(touch pwned).jpg", ""]
        let cameras = ["../../..", "/", "cam\u{0}era", String(repeating: "🎞", count: 100), "."]
        var stored = 0
        for (index, name) in names.enumerated() {
            let photo = CapturedPhoto(files: [CapturedFile(name: name, data: Data("photo \(index)".utf8))], camera: cameras[index % cameras.count])
            let context = ShotContext(session: index % 2 == 0 ? "../s" : "s", shot: ShotID(run: "test", number: index + 1), captureTime: Date(),
                                      camera: cameras[index % cameras.count], trigger: "test")
            let receipt = try await sink.store(photo, context: context)
            for file in receipt.files {
                let resolved = URL(fileURLWithPath: file.location).standardizedFileURL.resolvingSymlinksInPath().path
                #expect(resolved.hasPrefix(output + "/"), "'\(name.debugDescription)' was stored at \(resolved)")
                #expect(FileManager.default.contents(atPath: file.location) == Data("photo \(index)".utf8))
                stored += 1
            }
        }
        #expect(stored == names.count, "every photo stored, whatever its name")
        // Nothing appeared beside the output folder.
        #expect(tree(root.path).allSatisfy { $0 == "shoot" || $0 == "shoot/out" || $0.hasPrefix("shoot/out/") }, "\(tree(root.path).sorted())")
        #expect(!FileManager.default.fileExists(atPath: "pwned"))
    }

    @Test("file-name templates that would leave the folder are config errors", arguments: ["../x.jpg", "/abs/x.jpg", "a/../../x.jpg", "~/x.jpg", "a//b.jpg", "x\u{0}.jpg", "dir/"])
    func hostileTemplates(filename: String) {
        #expect(throws: TemplateError.self) { try FilesSink.Options(directory: "/tmp/out", filename: filename) }
    }

    @Test("the socket is 0600 even under a permissive umask, and the command sink never goes through a shell")
    func socketAndCommand() async throws {
        let folder = TemporaryDirectory("chaos-perm")
        let socket = folder.file("s.sock")
        let config = try writeConfig("""
        version: 1
        session: perm
        backend: {type: file-stub, width: 64, height: 48}
        triggers: [{type: socket, path: \(socket)}]
        sinks:
          - type: files
            directory: \(folder.file("out"))
          - type: command
            command: [/bin/echo, "$(touch \(folder.file("pwned1")))", ";", touch, "\(folder.file("pwned2"))", "`touch \(folder.file("pwned3"))`"]
        """, in: folder, name: "perm.yaml")
        let session = try await SocketSession.start(config, socket: socket, in: folder, umask: "0")
        var info = stat()
        #expect(stat(socket, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600, "socket mode \(String(info.st_mode & 0o777, radix: 8))")
        let client = try await SocketLines(path: socket)
        await client.send("{\"event\":\"capture\",\"id\":1}\n")
        #expect(await client.replies(1).first?["state"] as? String == "photoSuccess")
        let outcome = await session.stop()
        #expect(outcome.stderr.contains("$(touch "), "the hook got its arguments literally: \(outcome.stderr.suffix(600))")
        for name in ["pwned1", "pwned2", "pwned3"] { #expect(!FileManager.default.fileExists(atPath: folder.file(name)), "\(name) was created: a shell ran") }
    }

    @Test("plugins load only from configured paths: not from the working folder, the config's folder, the home folder or the library path")
    func pluginsOnlyFromConfiguredPaths() async throws {
        let library = try await examplePlugin()
        let folder = TemporaryDirectory("chaos-plugins")
        let home = folder.file("home")
        for place in [folder.path, folder.file("plugins"), "\(home)/.local/lib/shutterpipe", "\(home)/.shutterpipe/plugins", folder.file("lib")] {
            try FileManager.default.createDirectory(atPath: place, withIntermediateDirectories: true)
            try copyTestFile(library, to: "\(place)/libShutterPipeManifest.so")
        }
        let config = try writeConfig("version: 1\nbackend: {type: file-stub}\ntriggers: [{type: stdin}]\nsinks: [{type: manifest}]\n", in: folder)
        var environment = ProcessInfo.processInfo.environment.filter { $0.key != "SHUTTERPIPE_PLUGIN_PATH" }
        environment["HOME"] = home
        environment["LD_LIBRARY_PATH"] = folder.file("lib")
        environment["SHUTTERPIPE_PLUGIN_PATH"] = ""
        let listed = try await shutterpipe(["plugins"], in: folder.path, environment: environment)
        #expect(!listed.stdout.contains("manifest"), "a plugin was loaded from a place nobody configured: \(listed.stdout)")
        let validated = try await shutterpipe(["validate", config], in: folder.path, environment: environment)
        #expect(validated.status == 3 && validated.stderr.contains("unknown sink type 'manifest'"), "\(validated.stderr)")
        // Named, it loads.
        let named = try await shutterpipe(["validate", config, "--plugin-path", folder.file("plugins")], in: folder.path, environment: environment)
        #expect(named.status == 0, "\(named.stderr)")
    }
}
