#if canImport(Glibc)
import Glibc
#endif
import CTestSupport
import Foundation
import Synchronization
import TestSupport
import Testing

/// A turntable on a serial line, played by the test on a pseudo-terminal: it hears each
/// command line the sample step program sends and answers as it is told.
private final class PseudoTurntable: @unchecked Sendable {  // `master`, `slave` are set once; the rest is under `state`
    let device: String
    private let master: Int32
    private let slave: Int32
    private let state = Mutex<(heard: [String], stopped: Bool)>(([], false))
    private let answer: @Sendable (String) -> String?
    private let done = DispatchSemaphore(value: 0)

    /// `answer` gives the reply to a command line (nil: none).
    init(answer: @escaping @Sendable (String) -> String?) throws {
        var name = [CChar](repeating: 0, count: 128)
        master = shutterpipe_test_open_pty(&name, name.count)
        guard master >= 0 else { throw TestSupportError("no pseudo-terminal: \(String(cString: strerror(errno)))") }
        device = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // Held open by the test, so that the line stays up between two runs of the program.
        slave = open(device, O_RDWR | O_NOCTTY | O_CLOEXEC)
        self.answer = answer
        let thread = Thread { [self] in serve() }
        thread.name = "pseudo turntable"
        thread.start()
    }

    var heard: [String] { state.withLock { $0.heard } }

    private func serve() {
        defer { done.signal() }
        var pending: [UInt8] = []
        while !state.withLock({ $0.stopped }) {
            var wait = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&wait, 1, 100) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 256)
            let count = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
            guard count > 0 else { continue }
            pending += buffer[..<count]
            while let end = pending.firstIndex(where: { $0 == 10 || $0 == 13 }) {
                let line = String(decoding: pending[..<end], as: UTF8.self)
                pending.removeSubrange(...end)
                guard !line.isEmpty else { continue }
                state.withLock { $0.heard.append(line) }
                if let reply = answer(line) {
                    let bytes = Array((reply + "\r\n").utf8)
                    _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
                }
            }
        }
    }

    func stop() async {
        state.withLock { $0.stopped = true }
        _ = try? await offThePool { [done] in done.wait(timeout: .now() + 30) }
        close(slave)
        close(master)
    }
}

@Suite("the sample turntable on a serial line (Plugins/Examples/SerialTurntable), in a spin", .timeLimit(.minutes(3)))
struct TurntableTests {
    @Test("a spin of 4 turns the table between the frames by the angles it is told, each turn answered before the next frame; a table that never answers stops the spin with the program's words (the port, the reply it waited for, what to check); a port that is not there is named with the fix")
    func spinOnASerialLine() async throws {
        let folder = TemporaryDirectory("turntable")
        let turntable = try builtExecutable("shutterpipe-turntable")
        let table = try PseudoTurntable { line in line.hasPrefix("ROT ") ? "OK" : nil }
        let silent = try PseudoTurntable { _ in nil }
        let config = try writeConfig("""
        version: 1
        backend: {type: file-stub, width: 64, height: 48}
        triggers: [{type: stdin}]
        sinks: [{type: files, directory: \(folder.file("out")), filename: "{sequence}-{angle}.{ext}"}]
        sequences:
          spin:
            kind: spin
            frames: 4
            command: [\(turntable), --device, \(table.device), --baud, "115200", --send, "ROT {angle}", --timeout, "20", step, "90"]
          silent:
            kind: spin
            frames: 3
            command: [\(turntable), --device, \(silent.device), --timeout, "1", step, "120"]
          unplugged:
            kind: spin
            frames: 2
            command: [\(turntable), --device, \(folder.file("ttyUSB9")), step, "180"]
        """, in: folder)
        let run = try await shutterpipe(["run", "--config", config], input: "sequence spin\nsequence silent\nsequence unplugged\n", in: folder.path)
        await table.stop()
        await silent.stop()
        #expect(run.status == 0, "\(run.stderr.suffix(2000))")
        #expect(run.lines.contains("sequenceDone spin: 4 of 4 taken"), "\(run.stdout)")
        #expect(table.heard == ["ROT 90", "ROT 180", "ROT 270"], "\(table.heard)")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.file("out")).filter { $0.hasPrefix("spin-") }.sorted()
        #expect(names == ["spin-0.jpg", "spin-180.jpg", "spin-270.jpg", "spin-90.jpg"])
        #expect(silent.heard == ["R120"])
        let quiet = run.lines.first { $0.hasPrefix("sequenceFailed silent") } ?? ""
        #expect(quiet.hasPrefix("sequenceFailed silent: 1 of 3 taken, 2 cancelled") && quiet.contains("did not answer 'OK' to 'R120' within 1.0 s")
                && quiet.contains(silent.device) && quiet.contains("--baud 9600"), "\(run.stdout)")
        let away = run.lines.first { $0.hasPrefix("sequenceFailed unplugged") } ?? ""
        #expect(away.contains("no serial port at '\(folder.file("ttyUSB9"))'") && away.contains("/dev/serial/by-id/"), "\(run.stdout)")
    }
}
