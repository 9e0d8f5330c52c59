import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// `shutterpipe calibrate focus`: sweeps a lens through its positions on live view,
/// measures how sharp the picture is at each, puts the lens back, and keeps what it found
/// by lens name (``FocusCalibration``): the sharpest position, how many positions the lens
/// holds in focus, and the focus stack that covers the subject.
struct CalibrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate", abstract: "measure a lens's focus on live view and keep it by lens name (calibrate focus)",
        discussion: """
        `calibrate focus` opens the camera (the one at --port, the model given, or the first
        detected), steps its focus setting (focusdistance: positions of the lens) through
        its positions, or those from --from to --to, and measures each live-view frame's
        sharpness (the variance of its Laplacian). It prints the sweep, the sharpest
        position, how many positions are at least half as sharp (the depth the lens holds
        in focus: a focus stack's step), and a focus-stack plan over what the sweep found
        in focus. The lens goes back where it was. What it found is kept by lens name
        (the camera's lensname, else its model and serial) in
        $XDG_STATE_HOME/shutterpipe/lenses (~/.local/state/shutterpipe/lenses). Point the
        camera at the subject, with light enough for live view. A camera a running session
        holds cannot be opened again: end the session first.
        """)

    @Argument(valueName: "WHAT", help: "focus")
    var what: String

    @OptionGroup var camera: CameraChoice

    @Option(valueName: "KEY", help: "the lens's setting, a menu of positions")
    var setting = "focusdistance"

    @Option(valueName: "N", help: "the first position measured, as a number (1000 for \"1000 mm\")")
    var from: Int?

    @Option(valueName: "N", help: "the last position measured")
    var to: Int?

    @Option(valueName: "DURATION", help: "how long the lens settles after each move, before its frame")
    var settle: Duration = .milliseconds(100)

    @Flag(help: "print what was found as JSON")
    var json = false

    func run(_ context: CommandContext) async throws -> Int32 {
        guard what == "focus" else { throw UsageError("unknown calibration '\(what)'; use: shutterpipe calibrate focus") }
        let worker = camera.worker(named: "calibrate")
        let calibration: FocusCalibration
        do {
            calibration = try await sweep(worker)
            _ = try? await worker.request(.close)
            await worker.stop()
        } catch {
            _ = try? await worker.request(.close)
            await worker.stop()
            context.errors.printLine("shutterpipe calibrate focus: \(ShutterError.wrapping(error, as: .cameraFailure))")
            return CommandContext.failure
        }
        let kept: String
        do { kept = try calibration.keep() } catch {
            context.errors.printLine("shutterpipe calibrate focus: cannot keep the calibration in \(FocusCalibration.folder): \(error)")
            return CommandContext.failure
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            do {
                context.output.printLine(String(decoding: try encoder.encode(Report(calibration, kept: kept)), as: UTF8.self))
            } catch {
                context.errors.printLine("shutterpipe calibrate focus: cannot write the calibration as JSON: \(error) (it is kept in \(kept))")
                return CommandContext.failure
            }
        } else {
            for line in Self.text(calibration, kept: kept) { context.output.printLine(line) }
        }
        return CommandContext.success
    }

    /// Opens the camera, steps the lens through the positions, measures each, and puts it back.
    private func sweep(_ worker: CameraWorker) async throws -> FocusCalibration {
        let opened = try await worker.request(.open(camera.selection,
                                                    pollMilliseconds: 1000, reconnectLimitMilliseconds: 1000, keepTrying: false))
        guard case .opened(let identity) = opened else { throw ShutterError(.cameraFailure, "unexpected answer to opening the camera: \(opened)") }
        guard let lensSetting = try await read(setting, from: worker) else {
            throw ShutterError(.invalidConfiguration, "\(identity.model) has no setting '\(setting)'",
                               fix: "`shutterpipe camera settings` lists its settings; name the lens's positions with --setting")
        }
        var positions = lensSetting.choices.compactMap { choice in SettingText.number(in: choice).map { (choice, $0) } }.sorted { $0.1 < $1.1 }
        if let from { positions = positions.filter { $0.1 >= Double(from) } }
        if let to { positions = positions.filter { $0.1 <= Double(to) } }
        guard lensSetting.kind == .menu, positions.count >= 3 else {
            throw ShutterError(.invalidConfiguration, "'\(setting)' is not a lens's positions (a menu of at least 3 numbers\(from != nil || to != nil ? " between --from and --to" : "")): \(lensSetting.allowedValues)",
                               fix: "a relative drive (manualfocusdrive) cannot be calibrated yet: name a setting of positions, such as focusdistance")
        }
        let lens = (try? await read("lensname", from: worker))?.flatMap { $0.value.isEmpty ? nil : $0.value }
            ?? ([identity.model] + (identity.serial.map { [$0] } ?? [])).joined(separator: " ")
        var measured: [FocusCalibration.Position] = []
        var failure: (any Error)?
        let measuring = BlockingQueue(label: "shutterpipe calibrate")  // decodes off the cooperative pool
        defer { measuring.close() }
        do {
            for (value, number) in positions {
                try await change(value, on: worker)
                try await Task.sleep(for: settle)
                _ = try await frame(from: worker)  // one taken while the lens moved, on some bodies
                let jpeg = try await frame(from: worker)
                let sharpness = try await measuring.run { try LiveSharpness.of(jpeg) }
                measured.append(FocusCalibration.Position(value: value, number: number, sharpness: sharpness))
            }
        } catch {
            failure = error
        }
        // The lens back where it was, whatever happened; a sweep's own failure is not lost
        // behind the put-back's.
        do { try await change(lensSetting.value, on: worker) } catch {
            throw ShutterError(.cameraFailure, "the lens could not be put back at \(lensSetting.value): \(error)" + (failure.map { "; the sweep had failed: \($0)" } ?? ""),
                               fix: "set '\(setting)' back on the camera")
        }
        if let failure { throw failure }
        return FocusCalibration(lens: lens, setting: setting, positions: measured, measured: ISO8601DateFormatter().string(from: Date()))
    }

    private func read(_ key: String, from worker: CameraWorker) async throws -> CameraSetting? {
        switch try await worker.request(.readSettings([key])) {
        case .settings(let found): return found.first { $0.key == key }
        case .refused: return nil
        case let other: throw ShutterError(.cameraFailure, "unexpected answer to reading '\(key)': \(other)")
        }
    }

    private func change(_ value: String, on worker: CameraWorker) async throws {
        switch try await worker.request(.applySettings([SettingChange(key: setting, value: value)])) {
        case .settings: return
        case .refused(let failure, _): throw failure.error
        case let other: throw ShutterError(.cameraFailure, "unexpected answer to setting '\(setting)': \(other)")
        }
    }

    private func frame(from worker: CameraWorker) async throws -> Data {
        let (reply, descriptors, _) = try await worker.reply(to: worker.send(.preview))
        defer { descriptors.forEach { _ = close($0) } }
        switch reply {
        case .frame: return Data(try SharedBytes.map(descriptors[0]))
        case .noLiveView(let why): throw ShutterError(.invalidConfiguration, "the camera has no live view to measure focus on: \(why)")
        case .failed(let failure): throw failure.error
        default: throw ShutterError(.cameraFailure, "unexpected answer to a live-view frame: \(reply)")
        }
    }

    /// What `--json` prints.
    struct Report: Encodable {
        var calibration: FocusCalibration
        var sharpest: String?
        var sharpWidth: Int
        var stackStep: Int
        var stackPlan: String?
        var kept: String

        init(_ calibration: FocusCalibration, kept: String) {
            self.calibration = calibration
            sharpest = calibration.sharpest?.value
            sharpWidth = calibration.sharpWidth
            stackStep = calibration.stackStep
            stackPlan = calibration.stackPlan
            self.kept = kept
        }
    }

    /// The sweep as a table with a bar per position, then what it says.
    static func text(_ calibration: FocusCalibration, kept: String) -> [String] {
        let normalised = calibration.normalised
        var lines = ["\(calibration.lens): \(calibration.setting), \(calibration.positions.count) positions"]
        lines += formatColumns(zip(calibration.positions, normalised).map { position, share in
            [position.value, String(format: "%.1f", position.sharpness), String(repeating: "#", count: Int((share * 40).rounded()))]
        }, indent: "  ")
        if let sharpest = calibration.sharpest {
            lines.append("sharpest at \(sharpest.value); \(calibration.sharpWidth) position(s) at least half as sharp: a focus stack steps \(calibration.stackStep)")
        }
        if let plan = calibration.stackPlan { lines.append("a focus stack over what was in focus: \(plan)") }
        lines.append("kept in \(kept)")
        return lines
    }
}
