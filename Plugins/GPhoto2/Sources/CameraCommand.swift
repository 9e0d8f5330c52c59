import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// `shutterpipe camera settings`: one camera's settings, each with its value, its kind and
/// its choices, as `gphoto2 --list-config` and `--get-config` show them together; read
/// through a camera worker (this process loads no camera driver).
struct CameraCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "camera", abstract: "list a camera's settings with their values and choices (camera settings)",
        discussion: """
        `camera settings` opens the camera (the one at --port, the model given, or the first
        detected), reads every setting, or the ones named, and prints each with its current
        value, its kind (menu, range, toggle, text, date, button) and what it may be set to;
        sections as the camera groups them. Names are the ones `settings:` in a config and
        `shutterpipe set` take. A camera that a running session holds cannot be opened
        again: ask the session with `shutterpipe get` instead.
        """)

    @Argument(valueName: "ACTION", help: "settings")
    var action: String

    @Argument(valueName: "KEY", help: "only these settings (iso, shutterspeed, aperture, …)")
    var keys: [String] = []

    @OptionGroup var camera: CameraChoice

    @Flag(help: "print the settings as JSON")
    var json = false

    func run(_ context: CommandContext) async throws -> Int32 {
        guard action == "settings" else { throw UsageError("unknown action '\(action)'; use: shutterpipe camera settings [KEY...]") }
        let selection = camera.selection
        let worker = camera.worker(named: "settings")
        let identity: CameraIdentity
        let settings: [CameraSetting]
        do {
            let opened = try await worker.request(.open(selection, pollMilliseconds: 1000, reconnectLimitMilliseconds: 1000, keepTrying: false))
            guard case .opened(let camera) = opened else { throw ShutterError(.cameraFailure, "unexpected answer to opening the camera: \(opened)") }
            identity = camera
            let read = try await worker.request(.readSettings(keys))
            switch read {
            case .settings(let found): settings = found
            case .refused(let failure, _): throw failure.error
            default: throw ShutterError(.cameraFailure, "unexpected answer to reading the settings: \(read)")
            }
            _ = try? await worker.request(.close)
            await worker.stop()
        } catch {
            _ = try? await worker.request(.close)
            await worker.stop()
            let failure = ShutterError.wrapping(error, as: .cameraFailure)
            context.errors.printLine("shutterpipe camera settings: \(failure)")
            if failure.cause == .permissionDenied {
                // Our own session is as likely a holder as the desktop.
                context.errors.printLine("If a shutterpipe session is running with this camera, it holds it: read the settings through the session with `shutterpipe get`.")
            }
            return CommandContext.failure
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let report = Report(model: identity.model, port: identity.port, serial: identity.serial, settings: settings,
                                actions: settings.filter(SettingRoles.isAction).map(\.key))
            do {
                context.output.printLine(String(decoding: try encoder.encode(report), as: UTF8.self))
            } catch {
                context.errors.printLine("shutterpipe camera settings: cannot write the settings as JSON: \(error)")
                return CommandContext.failure
            }
        } else {
            context.output.printLine("\(identity.model) at \(identity.port)\(identity.serial.map { ", serial \($0)" } ?? ""): \(settings.count) setting\(settings.count == 1 ? "" : "s")")
            for line in Self.table(settings) { context.output.printLine(line) }
        }
        return CommandContext.success
    }

    /// What `--json` prints.
    struct Report: Encodable {
        var model: String
        var port: String
        var serial: String?
        var settings: [CameraSetting]
        /// The settings that are actions: sent once, never kept (``SettingRoles``).
        var actions: [String]
    }

    /// A section heading where the section changes, then a row per setting: key, label,
    /// kind, value, what it may be set to; the columns line up across sections.
    static func table(_ settings: [CameraSetting]) -> [String] {
        let rows = formatColumns(settings.map { [$0.key, $0.label, SettingRoles.kindText($0), $0.value.isEmpty ? "-" : $0.value, $0.allowedValues] },
                                 indent: "  ")
        var lines: [String] = []
        var section: String??
        for (setting, row) in zip(settings, rows) {
            if section != .some(setting.section) {
                section = .some(setting.section)
                lines.append("")
                lines.append(setting.section ?? "settings")
            }
            lines.append(row)
        }
        return lines
    }
}
