#if canImport(Glibc)
import Glibc
#endif
import CommandSink
import EvdevTrigger
import FileStubBackend
import FilesSink
import Foundation
import MPRISTrigger
import ShutterPipeConformance
import ShutterPipeKit
import SocketTrigger
import StdinTrigger
import Synchronization
import TestSupport
import Testing

@Suite("Every built-in plugin passes the conformance kit", .timeLimit(.minutes(3)))
struct BuiltInConformanceTests {
    @Test("files sink")
    func files() async throws {
        let folder = TemporaryDirectory("conform-files")
        try Data().write(to: URL(fileURLWithPath: folder.file("blocker")))
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
        let run = try RunningProcess(program: try builtExecutable("gphoto2-conformance"), ["--port", camera.portSpec, "--slow-port", longExposure.portSpec],
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
}
