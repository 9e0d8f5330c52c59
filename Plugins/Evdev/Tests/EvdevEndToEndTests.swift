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

@Suite("evdev trigger in shutterpipe run", .timeLimit(.minutes(2)))
struct EvdevEndToEndTests {
    @Test("remote presses take photos; a double tap enters and a long press exits")
    func run() async throws {
        let folder = TemporaryDirectory("evdev-e2e")
        let device = FakeInputDevice(at: folder.file("event3"))
        let config = try writeConfig("""
        version: 1
        session: remote
        backend:
          type: file-stub
        triggers:
          - type: evdev
            device: \(device.path)
            map: {KEY_VOLUMEUP: capture, "KEY_ENTER:double": enter, "KEY_ENTER:long": exit}
            rescanInterval: 50ms
        sinks:
          - type: files
            directory: \(folder.file("out"))
        coordinator: {autoEnter: false}
        """, in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path)
        await device.plugIn()
        // The timing is in the kernel timestamps, as on a device: a double tap, sent at once
        // so that a loaded machine cannot stretch it.
        let now = sp_monotonic_microseconds() / 1000
        device.send(tap(enterKey, at: now, length: 60) + tap(enterKey, at: now + 160, length: 60))
        #expect(await eventually { session.stderrSoFar.contains("enter from evdev → enteredPhotoMode") }, "\(session.stderrSoFar)")
        await device.press(volumeUp)
        await device.press(volumeUp)
        #expect(await eventually { folder.names("out").filter { $0.hasSuffix(".jpg") }.count == 2 })
        let later = max(sp_monotonic_microseconds() / 1000, now + 600)  // after the tap's (synthetic) last release
        device.send([key(enterKey, 1, at: later), key(enterKey, 0, at: later + 700)])  // a long press: exit
        #expect(await eventually { session.stderrSoFar.contains("exit from evdev → exitedOrUnableToEnter") }, "\(session.stderrSoFar)")
        await device.press(volumeUp)  // outside photo mode, with autoEnter off
        #expect(await eventually { session.stderrSoFar.contains("notInPhotoMode") })
        session.signal(SIGTERM)
        let outcome = await session.wait()
        #expect(outcome.status == 4)  // the capture outside photo mode failed
    }

    @Test("a foot pedal held long starts the sequence its map names (KEY_F5:long: sequence turn): three frames of a spin, each stored, the end in the log; a tap still captures once")
    func pedalStartsSequence() async throws {
        let folder = TemporaryDirectory("evdev-sequence")
        let device = FakeInputDevice(at: folder.file("event4"))
        let f5 = KeyNames.code("KEY_F5")!
        let config = try writeConfig("""
        version: 1
        session: pedal
        backend: {type: file-stub, width: 320, height: 240}
        triggers:
          - type: evdev
            device: \(device.path)
            map: {KEY_F5: capture, "KEY_F5:long": sequence turn}
            rescanInterval: 50ms
        sinks: [{type: files, directory: \(folder.file("out"))}]
        sequences:
          turn: {kind: spin, frames: 3, command: [/bin/true]}
        """, in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path)
        await device.plugIn()
        let now = sp_monotonic_microseconds() / 1000
        device.send([key(f5, 1, at: now), key(f5, 0, at: now + 800)])  // held 800 ms: long
        #expect(await eventually { session.stderrSoFar.contains("sequenceDone turn: 3 of 3 taken") }, "\(session.stderrSoFar)")
        #expect(folder.names("out").filter { $0.hasSuffix(".jpg") }.count == 3)
        device.send(tap(f5, at: now + 2000, length: 60))
        #expect(await eventually { folder.names("out").filter { $0.hasSuffix(".jpg") }.count == 4 }, "\(session.stderrSoFar)")
        session.signal(SIGTERM)
        let outcome = await session.wait()
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("sequence 'turn' from evdev (KEY_F5 long): a spin of 3 frame(s)"), "\(outcome.stderr)")
    }
}
