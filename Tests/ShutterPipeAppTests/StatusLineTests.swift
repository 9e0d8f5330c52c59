import Foundation
import ShutterPipeKit
@testable import ShutterPipeApp
import ShutterPipeRuntime
import ShutterPipeSupport
import Synchronization
import TestSupport
import Testing

@Suite("status line: the shot in flight")
struct StatusLineTests {
    @Test("capturing counts its seconds; downloading gives the percentage of the announced size, or the bytes when one is unknown; storing; first on the line")
    func phases() {
        let now = ContinuousClock.now
        func shot(_ phase: ShotTracker.Shot.Phase, _ downloads: [DownloadProgress] = []) -> ShotTracker.Shot {
            ShotTracker.Shot(number: 3, phase: phase, began: now - .milliseconds(2140), phaseBegan: now, downloads: downloads)
        }
        #expect(StatusLine.shotText(shot(.capturing), now: now) == "shot 3 capturing 2.1 s")
        let raw = DownloadProgress(file: "IMG_3.CR2", bytes: 12_000_000, total: 24_000_000)
        let jpeg = DownloadProgress(file: "IMG_3.JPG", bytes: 0, total: 8_000_000)
        #expect(StatusLine.shotText(shot(.downloading, [raw]), now: now) == "shot 3 downloading 50 % of \(formatByteCount(24_000_000))")
        #expect(StatusLine.shotText(shot(.downloading, [raw, jpeg]), now: now) == "shot 3 downloading 37 % of \(formatByteCount(32_000_000)) (2 files)")
        let unknown = DownloadProgress(file: "IMG_3.JPG", bytes: 4_000_000, total: nil)
        #expect(StatusLine.shotText(shot(.downloading, [raw, unknown]), now: now) == "shot 3 downloading \(formatByteCount(16_000_000)) (2 files)")
        #expect(StatusLine.shotText(shot(.storing), now: now) == "shot 3 storing")
        let line = StatusLine.text(CoordinatorStatus(), freeBytes: nil, inFlight: [shot(.storing)], now: now)
        #expect(line.hasPrefix("○ idle · shot 3 storing · 0 shots"), "\(line)")
    }
}

@Suite("status line: deliveries after the answers")
struct StatusLineDeliveryTests {
    @Test("a delivery queue says how many wait and which destination is away (its password left out); nothing once it is empty; the line carries the sinks' notes")
    func queueNotes() async throws {
        let folder = TemporaryDirectory("status-queue")
        let away = Mutex(true)
        let queue = DeliveryQueue(journal: folder.file("journal"), what: "upload", noun: "upload(s)", log: .discarding,
                                  shown: { $0.replacingOccurrences(of: "secret", with: "…") }) { _ in
            away.withLock { $0 } ? .wait("connection refused") : .done
        }
        queue.start()
        #expect(queue.statusNote == nil)
        try queue.enqueue([DeliveryQueue.Job(destination: ":sftp,pass=secret:", fields: ["a"]), DeliveryQueue.Job(destination: ":sftp,pass=secret:", fields: ["b"])])
        let note = "upload ':sftp,pass=…:' waiting, 2 queued"
        #expect(await eventually { queue.statusNote == note }, "\(queue.statusNote ?? "nil")")
        let line = StatusLine.text(CoordinatorStatus(), freeBytes: nil, notes: [queue.statusNote ?? ""])
        #expect(line.hasSuffix("· \(note)  › "), "\(line)")
        away.withLock { $0 = false }
        #expect(await eventually { queue.statusNote == nil })
        queue.stop(within: .seconds(5))
    }
}
