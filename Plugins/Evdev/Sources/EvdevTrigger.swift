#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CLinux
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// A trigger for input devices: Bluetooth selfie remotes, foot pedals, presenter clickers,
/// and BlueZ's AVRCP keys as a fallback for earbuds.
///
/// The device is read on a thread of its own. It is chosen by path or by name (found
/// through sysfs), optionally grabbed so its keys stop reaching the desktop (volume keys
/// no longer change the volume). When it vanishes (a sleepy remote, an unplugged pedal),
/// the trigger waits for it and picks it up again.
public final class EvdevTrigger: TriggerSource {
    /// The type name in configs.
    public static let typeName = "evdev"

    /// The keys a selfie remote, a presenter or BlueZ's AVRCP device sends, and what they
    /// mean by default: every "shoot" key captures; next and previous enter and leave.
    public static let defaultMap: [String: ShutterEvent] = [
        "KEY_VOLUMEUP": .capture, "KEY_VOLUMEDOWN": .capture, "KEY_ENTER": .capture, "KEY_CAMERA": .capture,
        "KEY_PLAYCD": .capture, "KEY_PAUSECD": .capture, "KEY_PLAYPAUSE": .capture,
        "KEY_NEXTSONG": .enter, "KEY_PREVIOUSSONG": .exit,
    ]

    /// The options of the `evdev` trigger.
    public struct Options: Sendable {
        /// The device file, such as `/dev/input/event5`.
        public var device: String?
        /// Or the device's name (prefix, any case), such as `AB Shutter3`.
        public var name: String?
        /// Take the device for shutterpipe alone (EVIOCGRAB).
        public var grab = true
        /// Key bindings by code.
        public var bindings: [UInt16: GestureDecoder.Binding] = [:]
        /// Gesture timing.
        public var timing = GestureDecoder.Timing()
        /// Where sysfs and the device files are (tests point these at a fake tree).
        public var sysfsRoot = "/sys"
        public var deviceDirectory = "/dev/input"
        /// How often to look for a device that is not there.
        public var rescanInterval: Duration = .milliseconds(500)
        /// Commands per synced state.
        public var feedback = StateCommands()
        /// `remote` (keys are shutter events, `map:`) or `scanner` (a barcode scanner: each
        /// scanned code, ended by Enter, sets the session label).
        public var mode = "remote"

        public init() {}
    }

    /// Registers the `evdev` type.
    public static func register(in registry: PluginRegistry) throws {
        try registry.registerTrigger(typeName, summary: "selfie remotes, pedals, clickers and AVRCP keys through /dev/input, with gestures and hot-plug") { options, environment in
            EvdevTrigger(options: try Options(options), log: environment.log)
        }
    }

    private let options: Options
    private let log: Logger
    private let stopped = Atomic<Bool>(false)

    public init(options: Options, log: Logger = .discarding) {
        self.options = options
        self.log = log
    }

    /// Reads the device until cancelled, waiting for it while it is away.
    public func run(delivering events: EventChannel) async throws {
        // A device that exists but cannot be opened is a setup error worth stopping for.
        if let path = resolve(), access(path, R_OK) != 0, errno == EACCES {
            throw Self.permissionError(path, name: options.name)
        }
        let done = AsyncStream<Void>.makeStream()
        OwnedThread.start("shutterpipe evdev") { [self] in
            self.readLoop(events)
            done.continuation.finish()
        }
        await withTaskCancellationHandler {
            for await _ in done.stream {}
        } onCancel: {
            stopped.store(true, ordering: .releasing)
        }
    }

    /// Input devices cannot show a state; runs the feedback command for it, if any.
    public func sync(_ answer: ShutterAnswer) async {
        options.feedback.run(for: answer.state, log: log)
    }

    // MARK: Devices

    /// The device file to open now, if the device is there.
    func resolve() -> String? {
        if let device = options.device { return FileManager.default.fileExists(atPath: device) ? device : nil }
        guard let wanted = options.name?.lowercased() else { return nil }
        let classes = "\(options.sysfsRoot)/class/input"
        let entries = ((try? FileManager.default.contentsOfDirectory(atPath: classes)) ?? []).filter { $0.hasPrefix("event") }
        for entry in entries.sorted(by: { $0.localizedStandardCompare($1) == .orderedAscending }) {
            guard let data = FileManager.default.contents(atPath: "\(classes)/\(entry)/device/name") else { continue }
            let name = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if name.lowercased().hasPrefix(wanted) {
                let path = "\(options.deviceDirectory)/\(entry)"
                if FileManager.default.fileExists(atPath: path) { return path }
            }
        }
        return nil
    }

    static func permissionError(_ path: String, name: String?) -> ShutterError {
        let match = name.map { "ATTRS{name}==\"\($0)*\"" } ?? "KERNEL==\"\(PathName.lastComponent(path))\""
        return ShutterError(.permissionDenied, "no permission to read \(path)",
                            fix: "add your user to the 'input' group (sudo usermod -aG input $USER, then log in again), or add a udev rule "
                                + "/etc/udev/rules.d/70-shutterpipe.rules: SUBSYSTEM==\"input\", KERNEL==\"event*\", \(match), TAG+=\"uaccess\" "
                                + "and run 'sudo udevadm control --reload && sudo udevadm trigger'")
    }

    private var describe: String { options.device ?? "'\(options.name ?? "?")'" }

    private func readLoop(_ events: EventChannel) {
        var decoder = GestureDecoder(bindings: options.bindings, timing: options.timing)
        var scanner = BarcodeReader()
        var announcedWait = false
        var permissionLogged = false
        while !stopped.load(ordering: .acquiring) {
            guard let path = resolve() else {
                if !announcedWait { log.warning("waiting for input device \(describe)"); announcedWait = true }
                sleep(for: options.rescanInterval)
                continue
            }
            let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            if descriptor < 0 {
                let error = errno
                if error == EACCES && !permissionLogged {  // right after plug-in, udev may not have set permissions yet
                    log.warning("\(Self.permissionError(path, name: options.name))")
                    permissionLogged = true
                }
                sleep(for: options.rescanInterval)
                continue
            }
            permissionLogged = false
            if options.grab && sp_evdev_grab(descriptor, 1) != 0 && errno != ENOTTY && errno != EINVAL {
                log.warning("could not grab \(path) (\(String(cString: strerror(errno)))); its keys also reach the desktop")
            }
            _ = sp_evdev_use_monotonic_clock(descriptor)
            log.info("reading \(path)" + (announcedWait ? " (device is back)" : ""))
            announcedWait = false
            read(descriptor, at: path, into: &decoder, &scanner, events)
            close(descriptor)
            decoder.reset()
            scanner.reset()
            if !stopped.load(ordering: .acquiring) {
                log.warning("input device \(path) went away; waiting for it to come back")
                announcedWait = true
                sleep(for: options.rescanInterval)
            }
        }
    }

    /// Reads until the device goes away or the trigger stops.
    private func read(_ descriptor: Int32, at path: String, into decoder: inout GestureDecoder, _ scanner: inout BarcodeReader, _ events: EventChannel) {
        let scans = options.mode == "scanner"
        var buffer = [UInt8](repeating: 0, count: InputEvent.size * 64)
        var pending = Data()
        var dropping = false
        while !stopped.load(ordering: .acquiring) {
            let now = sp_monotonic_microseconds()
            let timeout = decoder.nextDeadline.map { Int32(max(0, min(1_000, ($0 - now) / 1_000 + 1))) } ?? 1_000
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, timeout)
            if ready < 0 && errno == EINTR { continue }
            for output in decoder.flush(now: sp_monotonic_microseconds()) { send(output, to: events) }
            guard ready > 0 else {
                // A quiet second: check that the node we hold is still the one at `path`. A
                // removed device normally fails the read, but a node removed and created again
                // (another remote taking the same eventN) would otherwise go unnoticed.
                if !Self.isStillAt(path, descriptor) { return }
                continue
            }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                return  // ENODEV: unplugged
            }
            if count == 0 { return }  // end of file: gone
            pending.append(contentsOf: buffer[0..<count])
            while pending.count >= InputEvent.size {
                guard let event = InputEvent(pending.prefix(InputEvent.size)) else { break }
                pending.removeFirst(InputEvent.size)
                if event.type == InputEvent.synchronization {
                    if event.code == InputEvent.dropped {
                        // The kernel's buffer overflowed: what follows until the next report is
                        // incomplete, and key state is unknown.
                        dropping = true
                        decoder.reset()
                        scanner.reset()
                    } else if event.code == InputEvent.report {
                        dropping = false
                    }
                    continue
                }
                if dropping { continue }
                if scans {
                    if let code = scanner.feed(event) { events.send(LabelRequest(code, origin: "barcode scanner \(path)")) }
                    continue
                }
                for output in decoder.feed(event) { send(output, to: events) }
            }
        }
    }

    /// Whether `path` still names the file open on `descriptor`.
    static func isStillAt(_ path: String, _ descriptor: Int32) -> Bool {
        var named = stat(), held = stat()
        guard stat(path, &named) == 0, fstat(descriptor, &held) == 0 else { return false }
        return named.st_ino == held.st_ino && named.st_dev == held.st_dev
    }

    /// A decoded key or gesture to the coordinator: its event, or the sequence it starts
    /// (each frame answered through `sync`, the end in the log).
    private func send(_ output: GestureDecoder.Output, to events: EventChannel) {
        switch output.event {
        case .event(let event): events.send(event, origin: output.origin)
        case .sequence(let name): events.send(SequenceRequest(name, origin: output.origin)) { [log] answer in log.info(answer.summary) }
        }
    }

    private func sleep(for duration: Duration) {
        let deadline = sp_monotonic_microseconds() + Int64(duration.milliseconds * 1000)
        while !stopped.load(ordering: .acquiring) && sp_monotonic_microseconds() < deadline { usleep(20_000) }
    }
}

extension EvdevTrigger.Options {
    /// Reads the options of an `evdev` trigger.
    public init(_ options: PluginOptions) throws {
        self.init()
        device = try options.path("device")
        name = try options.string("name")
        guard device != nil || name != nil else {
            throw options.error("needs 'device' (such as /dev/input/event5) or 'name' (such as \"AB Shutter3\"); `cat /proc/bus/input/devices` lists them")
        }
        grab = try options.bool("grab", default: grab)
        timing.debounce = Int64(try options.duration("debounce", default: .milliseconds(40)).milliseconds * 1000)
        timing.tapWindow = Int64(try options.duration("tapWindow", default: .milliseconds(350)).milliseconds * 1000)
        timing.longPress = Int64(try options.duration("longPress", default: .milliseconds(600)).milliseconds * 1000)
        sysfsRoot = try options.path("sysfsRoot", default: sysfsRoot)
        deviceDirectory = try options.path("deviceDirectory", default: deviceDirectory)
        rescanInterval = try options.duration("rescanInterval", default: rescanInterval)
        feedback = try StateCommands(options)
        mode = try options.choice("mode", from: ["remote", "scanner"], default: mode)
        let map = try EventMap(options, defaults: EvdevTrigger.defaultMap, known: KeyNames.codes.keys.sorted() + ["NAME:single", "NAME:double", "NAME:triple", "NAME:long"],
                               startsSequences: true) { name in
            let parts = name.split(separator: ":", maxSplits: 1).map(String.init)
            guard KeyNames.code(parts[0]) != nil else { return nil }
            if parts.count == 2 && Gesture(rawValue: parts[1].lowercased()) == nil { return nil }
            return parts.count == 2 ? "\(parts[0].uppercased()):\(parts[1].lowercased())" : parts[0].uppercased()
        }
        let actions = map.events.map { ($0.key, KeyAction.event($0.value)) } + map.sequences.map { ($0.key, KeyAction.sequence($0.value)) }
        for (key, action) in actions {
            let parts = key.split(separator: ":", maxSplits: 1).map(String.init)
            let code = KeyNames.code(parts[0])!
            var binding = bindings[code] ?? GestureDecoder.Binding()
            if parts.count == 2, let gesture = Gesture(rawValue: parts[1]) { binding.gestures[gesture] = action } else { binding.immediate = action }
            bindings[code] = binding
        }
    }
}
