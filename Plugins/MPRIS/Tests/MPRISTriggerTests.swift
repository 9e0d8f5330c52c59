#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import MPRISTrigger
import ShutterPipeKit
import TestSupport
import Testing

let player = "org.mpris.MediaPlayer2.shutterpipe"
let playerPath = "/org/mpris/MediaPlayer2"

/// A running session with an mpris trigger on `bus`.
func mprisSession(_ bus: PrivateBus, _ folder: TemporaryDirectory, trigger: String = "", backend: String = "") async throws -> RunningProcess {
    let config = try writeConfig("""
    version: 1
    session: earbuds
    backend:
      type: file-stub
    \(backend)
    triggers:
      - type: mpris
    \(trigger)
    sinks:
      - type: files
        directory: \(folder.file("out"))
    """, in: folder)
    let session = try await RunningProcess.start(["run", "--config", config], in: folder.path, environment: bus.environment)
    let ready = await eventually {
        (try? await bus.send("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", ["string:\(player)"]))?
            .contains("boolean true") == true
    }
    #expect(ready, "the player never appeared: \(session.stderrSoFar)")
    return session
}

/// A player property, as dbus-send prints it.
func property(_ bus: PrivateBus, _ name: String) async throws -> String {
    try await bus.send(player, playerPath, "org.freedesktop.DBus.Properties.Get", ["string:org.mpris.MediaPlayer2.Player", "string:\(name)"])
}

func command(_ bus: PrivateBus, _ name: String) async throws {
    _ = try await bus.send(player, playerPath, "org.mpris.MediaPlayer2.Player.\(name)")
}

func title(_ bus: PrivateBus) async throws -> String? {
    let text = try await property(bus, "Metadata")
    guard let range = text.range(of: "\"xesam:title\"") else { return nil }
    let rest = text[range.upperBound...]
    guard let open = rest.range(of: "string \""), let close = rest[open.upperBound...].firstIndex(of: "\"") else { return nil }
    return String(rest[open.upperBound..<close])
}

@Suite("mpris trigger on a real D-Bus daemon", .timeLimit(.minutes(2)))
struct MPRISTriggerTests {
    @Test("Next enters, Play and Pause both capture, Previous exits; each answer shows as PlaybackStatus, title and PropertiesChanged")
    func earbudFlow() async throws {
        let bus = try await PrivateBus()
        let folder = TemporaryDirectory("mpris-flow")
        let monitor = try await RunningProcess.start(program: "/usr/bin/dbus-monitor", ["--address", bus.address, "type='signal',interface='org.freedesktop.DBus.Properties'"],
                                         in: folder.path)
        let session = try await mprisSession(bus, folder)
        try await command(bus, "Next")
        #expect(await eventually { (try? await title(bus)) == "Photo mode" })
        #expect(try await property(bus, "PlaybackStatus").contains("string \"Playing\""))
        try await command(bus, "Play")
        #expect(await eventually { (try? await title(bus)) == "Photo 1 saved" })
        try await command(bus, "Pause")  // earbuds send Pause when they believe the host is playing
        #expect(await eventually { (try? await title(bus)) == "Photo 2 saved" })
        try await command(bus, "Previous")
        #expect(await eventually { (try? await property(bus, "PlaybackStatus"))?.contains("string \"Stopped\"") == true })
        #expect(folder.names("out").filter { $0.hasSuffix(".jpg") } == ["earbuds-0001.jpg", "earbuds-0002.jpg"])
        #expect(await eventually { monitor.stdoutSoFar.components(separatedBy: "PropertiesChanged").count - 1 >= 4 })
        let signals = monitor.stdoutSoFar
        let titles = ["Photo mode", "Photo 1 saved", "Photo 2 saved", "Stopped"].map { signals.range(of: "string \"\($0)\"")?.lowerBound }
        #expect(titles.allSatisfy { $0 != nil }, "\(signals.suffix(2000))")
        #expect(zip(titles, titles.dropFirst()).allSatisfy { $0! < $1! })  // announced in order
        #expect(try await property(bus, "CanControl").contains("boolean true"))
        session.signal(SIGTERM)
        #expect(await session.wait().status == 0)
        monitor.signal(SIGKILL)  // dbus-monitor ignores SIGTERM
        _ = await monitor.wait(timeout: .seconds(60))
    }

    @Test("commands that are not mapped are switched off and do nothing")
    func disabledCommands() async throws {
        let bus = try await PrivateBus()
        let folder = TemporaryDirectory("mpris-map")
        let session = try await mprisSession(bus, folder, trigger: "    map: {PlayPause: capture, Play: capture}")
        #expect(try await property(bus, "CanGoNext").contains("boolean false"))
        #expect(try await property(bus, "CanGoPrevious").contains("boolean false"))
        #expect(try await property(bus, "CanPause").contains("boolean true"))  // through PlayPause
        try await command(bus, "Next")
        try await command(bus, "PlayPause")
        #expect(await eventually { (try? await title(bus)) == "Photo 1 saved" })
        session.signal(SIGTERM)
        let outcome = await session.wait()
        #expect(outcome.stderr.contains("Next is not mapped; ignored"))
        #expect(!outcome.stderr.contains("enter from mpris"))
    }

    @Test("an earbud gesture mapped to a sequence ('Next: sequence lapse') shoots the config's plan: each frame answered to the earbud as a photo, the three stored; CanGoNext says it is mapped; a map naming a plan the config lacks is refused at run with the names it has; a socket map that names a sequence is a config error with its place")
    func gestureStartsSequence() async throws {
        let bus = try await PrivateBus()
        let folder = TemporaryDirectory("mpris-sequence")
        let session = try await mprisSession(bus, folder, trigger: "    map: {Play: capture, Next: sequence lapse, Previous: sequence stak}",
                                             backend: "sequences: {lapse: {kind: spin, frames: 3, command: [/bin/true]}}")
        #expect(try await property(bus, "CanGoNext").contains("boolean true"))
        try await command(bus, "Next")
        #expect(await eventually { (try? await title(bus)) == "Photo 3 saved" }, "\(session.stderrSoFar)")
        #expect(await eventually { session.stderrSoFar.contains("sequenceDone lapse: 3 of 3 taken") }, "\(session.stderrSoFar)")
        try await command(bus, "Previous")
        #expect(await eventually { session.stderrSoFar.contains("sequenceRefused invalidConfiguration: no sequence 'stak' in the config (the sequences are: lapse)") },
                "\(session.stderrSoFar)")
        session.signal(SIGTERM)
        let outcome = await session.wait()
        #expect(folder.names("out").filter { $0.hasSuffix(".jpg") }.count == 3, "\(folder.names("out"))")
        #expect(outcome.stderr.contains("sequence 'lapse' from mpris (Next): a spin of 3 frame(s)"), "\(outcome.stderr)")

        let socket = try writeConfig("""
        version: 1
        backend: {type: file-stub}
        triggers:
          - {type: socket, path: \(folder.file("s.sock")), map: {shoot: sequence lapse}}
        sinks: [{type: files, directory: \(folder.file("x"))}]
        sequences: {lapse: {kind: interval, frames: 3, every: 1s}}
        """, in: folder, name: "socket.yaml")
        let refused = try await shutterpipe(["validate", socket], in: folder.path)
        #expect(refused.status == 3 && refused.stderr.contains("socket.yaml:4:") && refused.stderr.contains("this trigger does not start sequences from its map"), "\(refused.stderr)")
    }

    @Test("a failed capture shows a short reason a watch can display")
    func failureTitle() async throws {
        let bus = try await PrivateBus()
        let folder = TemporaryDirectory("mpris-fail")
        let session = try await mprisSession(bus, folder, backend: "  failEvery: 1\n  failWith: storageUnavailable")
        try await command(bus, "Play")
        #expect(await eventually { (try? await title(bus))?.hasPrefix("Capture failed:") == true })
        #expect(try await title(bus) == "Capture failed: storage unavailable")
        session.signal(SIGTERM)
        _ = await session.wait()
    }

    @Test("a second session on the same bus is refused with a clear message")
    func nameTaken() async throws {
        let bus = try await PrivateBus()
        let folder = TemporaryDirectory("mpris-taken")
        let first = try await mprisSession(bus, folder)
        let second = try await shutterpipe(["run", "--config", folder.file("studio.yaml")], in: folder.path, environment: bus.environment, timeout: .seconds(60))
        #expect(second.status == 1)
        #expect(second.stderr.contains("another program owns org.mpris.MediaPlayer2.shutterpipe"))
        first.signal(SIGTERM)
        _ = await first.wait()
    }

    @Test("answers map to titles and statuses")
    func titles() {
        let start = MPRISTrigger.PlayerState()
        let request = TriggerEvent(.capture)
        let saved = MPRISTrigger.state(after: ShutterAnswer(request: request, state: .photoSuccess, stored: [StoredFile(location: "a", sequence: 12, byteCount: 1)]), from: start)
        #expect(saved.title == "Photo 12 saved" && saved.playbackStatus == "Playing")
        let full = MPRISTrigger.state(after: ShutterAnswer(request: request, state: .photoFailed, failure: ShutterError(.storageUnavailable, "the camera's card is full")), from: saved)
        #expect(full.title == "Capture failed: card full" && full.playbackStatus == "Playing")
        let noCamera = MPRISTrigger.state(after: ShutterAnswer(request: TriggerEvent(.enter), state: .exitedOrUnableToEnter, failure: ShutterError(.noCamera, "x")), from: start)
        #expect(noCamera.title == "Cannot enter photo mode: no camera" && noCamera.playbackStatus == "Stopped")
    }
}
