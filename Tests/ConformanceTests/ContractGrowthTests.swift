import Foundation
import ShutterPipeKit
import TestSupport
import Testing

/// The contract grows without breaking (docs/plugins.md, "How the contract evolves"): a new
/// shutter event and a new camera-setting kind are a minor revision. The growth probe, a
/// plugin built against today's contract, runs in today's shutterpipe on the contract as
/// scripts/grow-contract grows it (each new case first, so that every case's number
/// moves): neither the plugin nor the host was rebuilt, and each meets the new cases in
/// its `@unknown default`.
@Suite("A plugin built against today's contract, after the contract grew", .timeLimit(.minutes(20)))
struct ContractGrowthTests {
    static func session(_ folder: TemporaryDirectory, probe: String) throws -> String {
        try writeConfig("""
        version: 1
        session: grown
        plugins:
          paths: [\(probe)]
        backend:
          type: growth-probe-camera
          settings: {focuspoint: point, iso: menu}
        triggers:
          - type: stdin
          - type: growth-probe
            events: [enter, focus, capture]
            report: \(folder.file("report.txt"))
        sinks:
          - type: files
            directory: \(folder.file("out"))
        """, in: folder)
    }

    @Test("loads, and a new event and setting kind pass between plugin and host: the plugin sends the event it never knew and reads its answer, the host ignores it as unknown, a setting of the new kind is listed, read and changed")
    func newEventAndKind() async throws {
        let (grown, probe) = (try await grownContract(), try await growthProbePlugin())
        let grownContract = ContractVersion(major: ShutterPipeSDK.contract.major, minor: ShutterPipeSDK.contract.minor + 1)
        let onGrown = ["LD_LIBRARY_PATH": grown]

        let folder = TemporaryDirectory("contract-growth")
        let listing = try await shutterpipe(["plugins", "--plugin-path", probe], in: folder.path, environment: onGrown)
        #expect(listing.status == 0, "\(listing.stderr)")
        #expect(listing.lines.first == "shutterpipe \(ShutterPipeSDK.version): plugin contract \(grownContract), \(ShutterPipeSDK.toolchain)", "\(listing.stdout)")
        #expect(listing.lines.contains { $0.hasPrefix("trigger") && $0.contains(" growth-probe ") && $0.contains(probe) }, "\(listing.stdout)")

        let config = try Self.session(folder, probe: probe)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: onGrown)
        // The gate: the probe's report is written (its events answered in photo mode)
        // before standard input says anything, whose end leaves photo mode.
        let reportFile = folder.file("report.txt")
        #expect(await eventually { FileManager.default.fileExists(atPath: reportFile) }, "\(session.stderrSoFar)")
        _ = session.send("get\nset focuspoint=3,4\nfocus\n")
        session.closeInput()
        let run = await session.wait(timeout: .seconds(60))
        #expect(run.status == 0, "\(run.stderr)")
        // The plugin: the event parsed by the grown contract reaches the host and comes
        // back answered; the kind it never knew is read, its allowed values in the
        // contract's words.
        let report = try String(contentsOfFile: folder.file("report.txt"), encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(report == ["event enter → enteredPhotoMode", "event newer event 'focus' → enteredPhotoMode", "event capture → photoSuccess",
                           "setting focuspoint newer kind 'point' allowed: a point in the frame, x,y", "setting iso menu allowed: no choices offered", "done"],
                "\(report)\n\(run.stderr)")
        // The host: the new event ignored as an unknown command, said; the setting of the
        // new kind listed and changed through rule 15 like any other.
        #expect(run.stderr.contains("event 'focus' from growth-probe is newer than this shutterpipe: ignored, as an unknown command"), "\(run.stderr)")
        #expect(run.stderr.contains("event 'focus' from stdin is newer than this shutterpipe"), "\(run.stderr)")
        #expect(run.lines.contains { $0.hasPrefix("settings ") && $0.contains("focuspoint=") }, "\(run.stdout)")
        #expect(run.lines.contains("settingsApplied focuspoint=3,4"), "\(run.stdout)")
        #expect(run.lines.last == "exitedOrUnableToEnter", "\(run.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.file("out")).filter { $0.hasSuffix(".txt") } == ["grown-0001.txt"])

        // The same plugin and host on today's contract: the event is unknown, the kind is
        // not there. What differed above was the grown library, nothing else.
        let today = TemporaryDirectory("contract-today")
        let control = try await shutterpipe(["run", "--config", try Self.session(today, probe: probe)], input: "focus\n", in: today.path)
        #expect(control.status == 0, "\(control.stderr)")
        let controlReport = try String(contentsOfFile: today.file("report.txt"), encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(controlReport == ["event enter → enteredPhotoMode", "event unknown → enteredPhotoMode", "event capture → photoSuccess", "done"], "\(controlReport)")
        #expect(control.stderr.contains("has no setting kind 'point'"), "\(control.stderr)")
    }
}
