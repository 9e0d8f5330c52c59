import Foundation
import Synchronization
import ShutterPipeKit

@_cdecl("shutterpipe_plugin_abi")
public func shutterpipePluginABI() -> Int32 { PluginEntry.abi }

@_cdecl("shutterpipe_plugin_contract")
public func shutterpipePluginContract() -> Int64 { PluginEntry.handshake }

@_cdecl("shutterpipe_plugin_entry")
public func shutterpipePluginEntry(_ context: UnsafeMutableRawPointer) -> Int32 {
    PluginEntry.register(context) { registry in
        try registry.registerTrigger("growth-probe", summary: "sends the events it is given by name and writes down how each was answered") { options, _ in
            GrowthProbeTrigger(events: try options.stringList("events"), report: try options.path("report", default: "./probe-report.txt"))
        }
        try registry.registerBackend("growth-probe-camera", summary: "a camera whose settings are of the kinds it is given by name",
                                     abilities: [.cameraSettings]) { options, _ in
            GrowthProbeCamera(kinds: try options.stringMap("settings").map { ($0.key, $0.value) })
        }
    }
}

/// How this plugin, built against today's contract, words what it meets: whatever it does
/// not know arrives in `@unknown default`.
enum Words {
    static func of(_ event: ShutterEvent) -> String {
        switch event {
        case .enter: return "enter"
        case .capture: return "capture"
        case .exit: return "exit"
        case .unknown: return "unknown"
        @unknown default: return "newer event '\(event.rawValue)'"
        }
    }

    static func of(_ state: ShutterState) -> String {
        switch state {
        case .enteredPhotoMode: return "enteredPhotoMode"
        case .exitedOrUnableToEnter: return "exitedOrUnableToEnter"
        case .photoSuccess: return "photoSuccess"
        case .photoFailed: return "photoFailed"
        @unknown default: return "newer state '\(state.rawValue)'"
        }
    }

    static func of(_ kind: CameraSetting.Kind) -> String {
        switch kind {
        case .text: return "text"
        case .range: return "range"
        case .toggle: return "toggle"
        case .menu: return "menu"
        case .date: return "date"
        case .button: return "button"
        @unknown default: return "newer kind '\(kind.rawValue)'"
        }
    }
}

/// Sends `events` (each parsed by the contract's own `ShutterEvent(rawValue:)`), one after
/// the other's answer, then reads the camera's settings; one line per answer and per
/// setting into `report`, and `done` last.
final class GrowthProbeTrigger: TriggerSource {
    let events: [String]
    let report: String

    init(events: [String], report: String) {
        self.events = events
        self.report = report
    }

    func run(delivering channel: EventChannel) async throws {
        var lines: [String] = []
        for name in events {
            let answer = try await channel.submit(TriggerEvent(ShutterEvent(rawValue: name) ?? .unknown, origin: "probe")).answer()
            lines.append("event \(Words.of(answer.request.event)) → \(Words.of(answer.state))")
        }
        let read = await withCheckedContinuation { (done: CheckedContinuation<SettingsAnswer, Never>) in
            channel.send(SettingsRequest(.read([]), origin: "probe")) { done.resume(returning: $0) }
        }
        for setting in read.settings { lines.append("setting \(setting.key) \(Words.of(setting.kind)) allowed: \(setting.allowedValues)") }
        lines.append("done")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: report), options: .atomic)
    }
}

/// A camera of settings only: each of `kinds` (key → kind name, parsed by the contract's
/// own `CameraSetting.Kind(rawValue:)`), and a capture of a few bytes.
final class GrowthProbeCamera: CaptureBackend, CameraSettingsControl {
    let values: Mutex<[String: String]> = Mutex([:])
    let kinds: [(key: String, kind: String)]

    init(kinds: [(String, String)]) {
        self.kinds = kinds.map { (key: $0.0, kind: $0.1) }
    }

    var cameraName: String { "growth probe" }
    func prepare(_ context: BackendContext) async throws {}
    func stop() async {}
    func status() async -> [CameraStatus] { [] }

    func capture() async throws -> CapturedPhoto {
        CapturedPhoto(files: [CapturedFile(name: "PROBE.TXT", data: Data("probe\n".utf8))], camera: cameraName)
    }

    func settings(_ keys: [String], camera: String?) async throws -> [CameraSetting] {
        let values = self.values.withLock { $0 }
        return try kinds.filter { keys.isEmpty || keys.contains($0.key) }.map { entry in
            guard let kind = CameraSetting.Kind(rawValue: entry.kind) else {
                throw SettingsRefusal(ShutterError(.invalidConfiguration, "the contract this probe runs on has no setting kind '\(entry.kind)'"))
            }
            return CameraSetting(key: entry.key, label: entry.key, kind: kind, value: values[entry.key] ?? "0,0")
        }
    }

    func apply(_ changes: [SettingChange], camera: String?) async throws -> [CameraSetting] {
        values.withLock { values in for change in changes { values[change.key] = change.value } }
        return try await settings(changes.map(\.key), camera: camera)
    }
}
