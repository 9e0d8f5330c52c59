#if canImport(Glibc)
import Glibc
#endif
import CLinux
@testable import EvdevTrigger
import Foundation
import ShutterPipeKit
import TestSupport
import Testing

/// The key presses a US-layout scanner sends for `text`, then Enter: Shift held around
/// capitals and symbols, each key a press and a release.
func scan(_ text: String, at start: Int64) -> [InputEvent] {
    var events: [InputEvent] = []
    var time = start
    let lookup = Dictionary(BarcodeReader.characters.flatMap { code, pair in [(pair.plain, (code, false)), (pair.shifted, (code, pair.shifted != pair.plain))] },
                            uniquingKeysWith: { first, _ in first })
    for character in text {
        guard let (code, shift) = lookup[character] else { continue }
        if shift { events.append(key(42, 1, at: time)) }
        events += [key(code, 1, at: time), key(code, 0, at: time + 2)]
        if shift { events.append(key(42, 0, at: time + 3)) }
        time += 5
    }
    return events + [key(28, 1, at: time), key(28, 0, at: time + 2), InputEvent(time: (time + 2) * 1000, type: 0, code: 0, value: 0)]
}

@Suite("evdev trigger as a barcode scanner (mode: scanner)", .timeLimit(.minutes(2)))
struct BarcodeScannerTests {
    @Test("key presses become the code with Shift for capitals and symbols; Enter ends it; autorepeat, releases, an empty line and an endless one add nothing")
    func decoding() {
        var reader = BarcodeReader()
        #expect(scan("ORDER-1234/b", at: 0).compactMap { reader.feed($0) } == ["ORDER-1234/b"])
        #expect(scan("", at: 100).compactMap { reader.feed($0) } == [])
        #expect([key(30, 1, at: 0), key(30, 2, at: 5), key(30, 2, at: 10), key(30, 0, at: 15), key(28, 1, at: 20)].compactMap { reader.feed($0) } == ["a"])
        let endless = (0..<300).flatMap { index in [key(30, 1, at: Int64(index) * 2), key(30, 0, at: Int64(index) * 2 + 1)] } + [key(28, 1, at: 700)]
        #expect(endless.compactMap { reader.feed($0) } == [], "a code over 200 characters is dropped, not cut")
        #expect(scan("X1", at: 800).compactMap { reader.feed($0) } == ["X1"], "the next code is whole")
    }

    @Test("a scanner on a FIFO keyboard: a scanned code sets {label} in the next shot's name; the next code replaces it")
    func labelsTheNextShot() async throws {
        let folder = TemporaryDirectory("scanner")
        let device = FakeInputDevice(at: folder.file("event-scanner"))
        let config = try writeConfig("""
        version: 1
        session: school
        backend: {type: file-stub, width: 160, height: 120}
        triggers:
          - {type: stdin}
          - {type: evdev, device: \(device.path), mode: scanner, grab: false}
        sinks:
          - {type: files, directory: \(folder.file("out")), filename: "{label}-{seq:03}.{ext}"}
        """, in: folder)
        let session = try await RunningProcess.start(["run", "--config", config, "--no-status"], in: folder.path)
        await device.plugIn()
        for (index, code) in ["PUPIL-0001", "Pupil-0002/B"].enumerated() {
            device.send(scan(code, at: sp_monotonic_microseconds() / 1000))
            await session.waitForOutput("label '\(code)' from evdev")
            session.send("capture\n")
            await session.waitForOutput(on: .stdout, "answer \(index + 1)") { $0.split(separator: "\n").count >= index + 1 }
        }
        session.signal(SIGTERM)  // the evdev trigger keeps the session running after stdin ends
        let outcome = await session.wait(timeout: .seconds(60))
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(folder.names("out").filter { $0.hasSuffix(".jpg") }.sorted() == ["PUPIL-0001-001.jpg", "Pupil-0002_B-002.jpg"], "\(outcome.stdout)")
    }
}
