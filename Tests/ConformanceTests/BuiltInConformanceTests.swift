#if canImport(Glibc)
import Glibc
#endif
import CommandSink
import EvdevTrigger
import FileStubBackend
import FilesSink
import Foundation
import HotFolderBackend
import MPRISTrigger
import MQTTTrigger
import ShutterPipeApp
import ShutterPipeConformance
import ShutterPipeFixtures
import ShutterPipeKit
import SocketTrigger
import StdinTrigger
import Synchronization
import TestSupport
import Testing
import UploadSink
import WebTrigger

@Suite("Every built-in plugin passes the conformance kit", .timeLimit(.minutes(3)))
struct BuiltInConformanceTests {
    @Test("every trigger, backend and sink type built in has its test in this suite, named \"TYPE KIND\"")
    func everyBuiltInRunsTheKit() throws {
        let source = try String(contentsOfFile: "\(repositoryRoot)/Tests/ConformanceTests/BuiltInConformanceTests.swift", encoding: .utf8)
        let plugins = BuiltInPlugins.registry().descriptors
        #expect(plugins.count >= 12)
        for plugin in plugins {
            #expect(source.contains("@Test(\"\(plugin.type) \(plugin.kind.rawValue)"), "the built-in \(plugin.kind.rawValue) '\(plugin.type)' does not run the conformance kit here")
        }
    }

    @Test("files sink")
    func files() async throws {
        let folder = TemporaryDirectory("conform-files")
        try Data().writeTestFile(folder.file("blocker"))
        let problems = await Conformance.checkSink({ FilesSink(options: try FilesSink.Options(directory: folder.file("out"))) },
                                                   failing: { FilesSink(options: try FilesSink.Options(directory: folder.file("blocker/out"))) })
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test("command sink")
    func command() async {
        let problems = await Conformance.checkSink {
            var options = CommandSink.Options()
            options.command = ["/bin/true"]
            return CommandSink(options: options, session: "conformance")
        }
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test("file-stub backend, with a slow one for cancellation")
    func fileStub() async {
        var slow = FileStubBackend.Options()
        slow.latency = .seconds(30)
        let problems = await Conformance.checkBackend(FileStubBackend(options: .init()), slow: FileStubBackend(options: slow))
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test("gphoto2 backend on the virtual camera, with a long exposure for cancellation")
    func gphoto2() async throws {
        let camera = try await FakeCamera()
        let longExposure = try await FakeCamera(["--capture-delay", "4s"], home: camera.home)  // longer than the kit's 2 s bound
        let run = try await RunningProcess.start(program: try builtExecutable("gphoto2-conformance"), ["--port", camera.portSpec, "--slow-port", longExposure.portSpec],
                                     in: camera.home.path, environment: ["HOME": camera.home.path])
        let outcome = await run.wait(timeout: .seconds(90))
        #expect(outcome.status == 0 && outcome.stdout.contains("conformant"), "\(outcome.stdout)\(outcome.stderr)")
    }

    @Test("stdin trigger")
    func stdin() async {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        let writer = descriptors[1]
        let problems = await Conformance.checkTrigger(StdinTrigger(input: descriptors[0], interactive: false) { _ in }, expecting: 2) {
            _ = Array("enter\ncapture\n".utf8).withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
        }
        close(writer)
        close(descriptors[0])
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test("socket trigger")
    func socket() async throws {
        let folder = TemporaryDirectory("conform-socket")
        var options = SocketTrigger.Options()
        options.path = folder.file("s.sock")
        let path = options.path
        let connected = Mutex<SocketLines?>(nil)
        let problems = await Conformance.checkTrigger(SocketTrigger(options: options)) {
            let client = try await SocketLines(path: path)
            await client.send("{\"event\":\"capture\"}\n")
            connected.withLock { $0 = client }  // stays connected while the kit syncs the answer
        }
        #expect(problems.isEmpty, "\(problems)")
        let replies = await connected.withLock { $0 }?.replies(1) ?? []
        #expect(replies.first?["state"] as? String == "photoSuccess", "the synced answer reached the client: \(replies)")
    }

    @Test("evdev trigger")
    func evdev() async throws {
        let folder = TemporaryDirectory("conform-evdev")
        let path = folder.file("event1")
        mkfifo(path, 0o600)
        var options = try EvdevTrigger.Options(PluginOptions(configNode(["device": path]), owner: "trigger 'evdev'"))
        options.rescanInterval = .milliseconds(50)
        // The device stays plugged in (the FIFO's writer open) for the whole check: closing
        // it would be an unplug.
        let writer = Mutex<Int32>(-1)
        defer { writer.withLock { if $0 >= 0 { close($0) } } }
        let problems = await Conformance.checkTrigger(EvdevTrigger(options: options)) {
            // A FIFO opens for writing once the trigger has opened it for reading.
            let opened = await eventually {
                writer.withLock { descriptor in
                    if descriptor < 0 { descriptor = open(path, O_WRONLY | O_NONBLOCK) }
                    return descriptor >= 0
                }
            }
            guard opened else { throw TestSupportError("the evdev trigger never opened \(path)") }
            let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
            let press = InputEvent(time: now, type: InputEvent.key, code: KeyNames.code("KEY_VOLUMEUP")!, value: 1).bytes
            _ = writer.withLock { descriptor in press.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } }
        }
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test("mpris trigger")
    func mpris() async throws {
        let bus = try await PrivateBus()
        var options = MPRISTrigger.Options()
        options.busAddress = bus.address
        options.busName = "conformance"
        let problems = await Conformance.checkTrigger(MPRISTrigger(options: options)) {
            // The player is there once it owns its name on the bus (on a loaded machine,
            // later than the kit's first 100 ms); a Play sent before would go nowhere.
            _ = await eventually {
                (try? await bus.send("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner",
                                     ["string:org.mpris.MediaPlayer2.conformance"]))?.contains("boolean true") == true
            }
            _ = try await bus.send("org.mpris.MediaPlayer2.conformance", "/org/mpris/MediaPlayer2", "org.mpris.MediaPlayer2.Player.Play")
        }
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test("web trigger: POST /api/capture is answered with the state the kit synced")
    func web() async throws {
        var options = WebOptions()
        options.port = 0
        let logged = Mutex<[String]>([])
        let trigger = WebTrigger(options: options, log: Logger(source: "web") { record in logged.withLock { $0.append(record.message) } })
        let reply = Mutex<Task<HTTPReply, any Error>?>(nil)
        let problems = await Conformance.checkTrigger(trigger) {
            let port = try await Self.listening { logged.withLock { $0 } }
            // The request waits for its answer, which the kit syncs once the event arrived.
            reply.withLock { $0 = Task { try await http("POST", "/api/capture", port: port) } }
        }
        #expect(problems.isEmpty, "\(problems)")
        let answered = try await reply.withLock { $0 }?.value
        #expect(answered?.status == 200 && answered?.json?["state"] as? String == "photoSuccess", "\(String(describing: answered?.json))")
    }

    @Test("mqtt trigger: a rig's capture command is answered on the rig")
    func mqtt() async throws {
        let broker = try await Broker("conform-mqtt")
        let folder = TemporaryDirectory("conform-mqtt")
        var options = MQTTOptions()
        options.broker = broker.url
        options.rig = "test"
        options.node = "kit"
        let watcher = try await StateWatcher(broker, in: folder)
        let fired = Mutex<Task<Outcome, any Error>?>(nil)
        let problems = await Conformance.checkTrigger(MQTTTrigger(options: options)) {
            guard await eventually(timeout: .seconds(60), { watcher.online["kit"] == true }) else {
                throw TestSupportError("the node never said it was online: \(broker.log)")
            }
            fired.withLock { $0 = Task { try await rig(["capture", "--json", "--timeout", "10s"], broker: broker, in: folder) } }
        }
        #expect(problems.isEmpty, "\(problems)")
        let outcome = try await fired.withLock { $0 }?.value
        #expect(outcome?.status == 0 && outcome?.stdout.contains("photoSuccess") == true, "\(outcome?.stdout ?? "") \(outcome?.stderr ?? "") \(watcher.states) \(watcher.online)")
    }

    @Test("upload sink, to a local folder through rclone")
    func upload() async throws {
        let folder = TemporaryDirectory("conform-upload")
        var options = UploadSink.Options()
        options.remote = ":local:\(folder.file("remote"))"
        options.queueFolder = folder.file("queue")
        let configured = options
        let problems = await Conformance.checkSink { UploadSink(options: configured, session: "conformance") }
        #expect(problems.isEmpty, "\(problems)")
        // Both shots' two files went, after the answers, by the time the sink ended.
        let uploaded = (try? FileManager.default.subpathsOfDirectory(atPath: folder.file("remote"))) ?? []
        #expect(uploaded.filter { $0.hasSuffix(".JPG") || $0.hasSuffix(".CR2") }.count == 4, "\(uploaded)")
    }

    @Test("hotfolder backend: a file written into the folder is delivered; a capture is refused")
    func hotfolder() async throws {
        let folder = TemporaryDirectory("conform-hotfolder")
        var options = HotFolderBackend.Options()
        options.folder = folder.file("incoming")
        try FileManager.default.createDirectory(atPath: options.folder, withIntermediateDirectories: true)
        let incoming = options.folder
        let problems = await Conformance.checkDeliveringBackend(HotFolderBackend(options: options), takesCaptures: false) {
            let photo = SyntheticJPEG.make(width: 320, height: 240, shot: 1)
            try photo.writeTestFile("\(incoming)/DROP0001.JPG")
        }
        #expect(problems.isEmpty, "\(problems)")
    }

    /// The port the web trigger listens on, from its log line, once it does.
    private static func listening(_ logged: @escaping @Sendable () -> [String]) async throws -> UInt16 {
        let port: @Sendable () -> UInt16? = {
            logged().lazy.compactMap { line -> UInt16? in
                guard let range = line.range(of: "web page at http://127.0.0.1:") else { return nil }
                return UInt16(line[range.upperBound...].prefix { $0.isNumber })
            }.first
        }
        guard await eventually(timeout: .seconds(60), { port() != nil }), let found = port() else {
            throw TestSupportError("the web trigger never said where it listens: \(logged())")
        }
        return found
    }
}
