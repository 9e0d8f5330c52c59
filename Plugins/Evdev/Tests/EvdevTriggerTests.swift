#if canImport(Glibc)
import Glibc
#endif
import CLinux
@testable import EvdevTrigger
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization
import TestSupport
import Testing

let enterKey = KeyNames.code("KEY_ENTER")!, volumeUp = KeyNames.code("KEY_VOLUMEUP")!

func key(_ code: UInt16, _ value: Int32, at milliseconds: Int64) -> InputEvent {
    InputEvent(time: milliseconds * 1000, type: InputEvent.key, code: code, value: value)
}

/// A press and release `length` ms long starting at `start`.
func tap(_ code: UInt16, at start: Int64, length: Int64 = 80) -> [InputEvent] {
    [key(code, 1, at: start), key(code, 0, at: start + length)]
}

/// A FIFO standing in for /dev/input/eventN, fed with packed records.
final class FakeInputDevice: @unchecked Sendable {
    let path: String
    private var writer: Int32 = -1

    init(at path: String) {
        self.path = path
        mkfifo(path, 0o600)
    }

    /// Opens the writing end once the trigger has opened its end; records a failure if the
    /// trigger never does within `limit`.
    func plugIn(within limit: Duration = .seconds(60), sourceLocation: Testing.SourceLocation = #_sourceLocation) async {
        let clock = ContinuousClock(), deadline = clock.now + limit
        while writer < 0 {
            writer = open(path, O_WRONLY | O_NONBLOCK)
            guard writer < 0 else { return }
            guard clock.now < deadline, !Task.isCancelled else {
                Issue.record("the trigger never opened \(path) within \(limit)", sourceLocation: sourceLocation)
                return
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    func send(_ events: [InputEvent]) {
        let data = events.reduce(into: Data()) { $0.append($1.bytes) }
        _ = data.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
    }

    /// Like pulling the remote's battery: the node leaves the device directory and the reader
    /// sees end of file, in that order, as with the kernel.
    func unplug() {
        unlink(path)
        close(writer)
        writer = -1
    }

    /// Presses and releases a key now (kernel monotonic timestamps), as one report each:
    /// the release carries the time it was held, so no wait stands in for it. A press comes
    /// at least 150 ms after the last one's release, as a finger's would, so timestamps
    /// never run backwards when presses are sent faster than that.
    func press(_ code: UInt16, hold: Int64 = 60) async {
        let now = max(sp_monotonic_microseconds() / 1000, lastRelease + 150)
        lastRelease = now + hold
        send([InputEvent(time: now * 1000, type: InputEvent.miscellaneous, code: 4, value: Int32(code)),
              key(code, 1, at: now), InputEvent(time: now * 1000, type: 0, code: 0, value: 0),
              key(code, 0, at: now + hold), InputEvent(time: (now + hold) * 1000, type: 0, code: 0, value: 0)])
    }

    /// The (synthetic) time of the last press's release, in ms.
    private var lastRelease: Int64 = 0

    deinit { if writer >= 0 { close(writer) } }
}

/// Runs an evdev trigger on `options` and collects what it sends.
final class SentEvents: Sendable {
    private let events = Mutex<[TriggerEvent]>([])
    func append(_ event: TriggerEvent) { events.withLock { $0.append(event) } }
    var all: [TriggerEvent] { events.withLock { $0 } }
}

final class TriggerHarness: @unchecked Sendable {
    let sent = SentEvents()
    let log = LogRecorder()
    private var task: Task<Void, any Error>?

    init(_ options: EvdevTrigger.Options) {
        let trigger = EvdevTrigger(options: options, log: log.logger)
        let sent = self.sent
        task = Task { try await trigger.run(delivering: EventChannel { event in sent.append(event) }) }
    }

    var events: [ShutterEvent] { sent.all.map(\.event) }

    func stop() async {
        task?.cancel()
        _ = try? await withDeadline(.seconds(60), "evdev trigger stopping") { [task] in try await task?.value }
    }
}

@Suite("evdev trigger reading a device", .timeLimit(.minutes(2)))
struct EvdevReaderTests {
    func options(_ configure: (inout EvdevTrigger.Options) -> Void) throws -> EvdevTrigger.Options {
        var options = try EvdevTrigger.Options(PluginOptions(configNode(["device": "/nonexistent"]), owner: "trigger 'evdev'"))
        options.rescanInterval = .milliseconds(50)
        configure(&options)
        return options
    }

    @Test("key presses on the device become events; MSC_SCAN noise is ignored")
    func reads() async throws {
        let folder = TemporaryDirectory("evdev-read")
        let device = FakeInputDevice(at: folder.file("event5"))
        let harness = TriggerHarness(try options { $0.device = device.path })
        await device.plugIn()
        await device.press(volumeUp)
        await device.press(KeyNames.code("KEY_NEXTSONG")!)
        await device.press(KeyNames.code("KEY_VOLUMEDOWN")!)
        #expect(await eventually { harness.events.count == 3 })
        #expect(harness.events == [.capture, .enter, .capture])
        #expect(harness.sent.all.map(\.origin) == ["KEY_VOLUMEUP", "KEY_NEXTSONG", "KEY_VOLUMEDOWN"])
        await harness.stop()
    }

    @Test("after SYN_DROPPED, events up to the next report are discarded")
    func synDropped() async throws {
        let folder = TemporaryDirectory("evdev-drop")
        let device = FakeInputDevice(at: folder.file("event6"))
        let harness = TriggerHarness(try options { $0.device = device.path })
        await device.plugIn()
        let now = sp_monotonic_microseconds() / 1000
        device.send([InputEvent(time: now * 1000, type: 0, code: InputEvent.dropped, value: 0)] + tap(volumeUp, at: now)
                    + [InputEvent(time: now * 1000, type: 0, code: InputEvent.report, value: 0)] + tap(volumeUp, at: now + 200))
        // A last press that means something else marks the end: once it has arrived,
        // everything before it was read, so the count is final.
        await device.press(KeyNames.code("KEY_NEXTSONG")!)
        #expect(await eventually { harness.events.last == .enter })
        #expect(harness.events == [.capture, .enter])
        await harness.stop()
    }

    @Test("an unplugged device is waited for and picked up again when it returns")
    func hotPlug() async throws {
        let folder = TemporaryDirectory("evdev-plug")
        let device = FakeInputDevice(at: folder.file("event7"))
        let harness = TriggerHarness(try options { $0.device = device.path })
        await device.plugIn()
        await device.press(volumeUp)
        #expect(await eventually { harness.events.count == 1 })
        device.unplug()
        #expect(await eventually { harness.log.messages.contains { $0.contains("went away") } })
        let returned = FakeInputDevice(at: device.path)
        await returned.plugIn()
        #expect(await eventually { harness.log.messages.contains { $0.contains("(device is back)") } })
        await returned.press(volumeUp)
        #expect(await eventually { harness.events.count == 2 })
        await harness.stop()
    }

    @Test("a node removed and created again under the same name is picked up, even while the old one stays open")
    func replacedNode() async throws {
        let folder = TemporaryDirectory("evdev-replace")
        let device = FakeInputDevice(at: folder.file("event8"))
        let harness = TriggerHarness(try options { $0.device = device.path })
        await device.plugIn()
        await device.press(volumeUp)
        #expect(await eventually { harness.events.count == 1 })
        unlink(device.path)  // the old writer stays open: no end of file reaches the reader
        let replacement = FakeInputDevice(at: device.path)
        await replacement.plugIn()
        await replacement.press(volumeUp)
        #expect(await eventually { harness.events.count == 2 })
        withExtendedLifetime(device) {}
        await harness.stop()
    }

    @Test("a device chosen by name is found through sysfs")
    func byName() async throws {
        let folder = TemporaryDirectory("evdev-sysfs")
        for (event, name) in [("event2", "AT Translated Set 2 keyboard"), ("event9", "AB Shutter3-1a2b")] {
            try FileManager.default.createDirectory(atPath: folder.file("sys/class/input/\(event)/device"), withIntermediateDirectories: true)
            try Data("\(name)\n".utf8).writeTestFile(folder.file("sys/class/input/\(event)/device/name"))
        }
        try FileManager.default.createDirectory(atPath: folder.file("dev"), withIntermediateDirectories: true)
        let device = FakeInputDevice(at: folder.file("dev/event9"))
        let trigger = try options {
            $0.device = nil; $0.name = "ab shutter3"; $0.sysfsRoot = folder.file("sys"); $0.deviceDirectory = folder.file("dev")
        }
        #expect(EvdevTrigger(options: trigger).resolve() == device.path)
        let harness = TriggerHarness(trigger)
        await device.plugIn()
        await device.press(volumeUp)
        #expect(await eventually { harness.events == [.capture] })
        await harness.stop()
    }

    @Test("a permission error names the udev rule and the input group")
    func permissionMessage() {
        let error = EvdevTrigger.permissionError("/dev/input/event9", name: "AB Shutter3")
        #expect(error.cause == .permissionDenied)
        #expect(error.fix?.contains("SUBSYSTEM==\"input\", KERNEL==\"event*\", ATTRS{name}==\"AB Shutter3*\", TAG+=\"uaccess\"") == true)
        #expect(error.fix?.contains("usermod -aG input") == true)
    }

    @Test("the map: gestures, defaults, and mistakes")
    func mapOptions() throws {
        let parsed = try EvdevTrigger.Options(PluginOptions(configNode([
            "name": "pedal", "map": ["KEY_B": "capture", "KEY_B:double": "enter", "key_b:long": "exit", "KEY_ESC": "ignore"],
        ]), owner: "trigger 'evdev'"))
        let b = try #require(parsed.bindings[KeyNames.code("KEY_B")!])
        #expect(b.immediate == .capture && b.gestures == [.double: .enter, .long: .exit])
        let pedal = try EvdevTrigger.Options(PluginOptions(configNode(["name": "x", "map": ["KEY_F5:long": "sequence turn", "KEY_F5": "capture"]]), owner: "t"))
        #expect(pedal.bindings[KeyNames.code("KEY_F5")!] == GestureDecoder.Binding(immediate: .capture, gestures: [.long: .sequence("turn")]))
        #expect(parsed.bindings[KeyNames.code("KEY_ESC")!] == nil)
        #expect(parsed.bindings.count == 1)  // a map replaces the defaults
        let defaults = try EvdevTrigger.Options(PluginOptions(configNode(["name": "x"]), owner: "trigger 'evdev'"))
        #expect(defaults.bindings[volumeUp]?.immediate == .capture)
        #expect(defaults.bindings[KeyNames.code("KEY_PREVIOUSSONG")!]?.immediate == .exit)
        #expect(throws: ConfigError.self) { try EvdevTrigger.Options(PluginOptions(configNode(["name": "x", "map": ["KEY_VOLUMUP": "capture"]]), owner: "t")) }
        #expect(throws: ConfigError.self) { try EvdevTrigger.Options(PluginOptions(configNode(["name": "x", "map": ["KEY_B:quadruple": "capture"]]), owner: "t")) }
        #expect(throws: ConfigError.self) { try EvdevTrigger.Options(PluginOptions(configNode([:] as [String: Any]), owner: "t")) }
    }
}
