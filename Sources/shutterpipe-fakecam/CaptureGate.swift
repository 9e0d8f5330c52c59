import Foundation
import Synchronization

/// `--gate FILE`: holds each capture's events until FILE has as many lines as captures
/// have arrived, so a test acts (kills a worker, signals a session) while a shot is surely
/// in flight, then releases it by appending a line. `--download-gate FILE` does the same
/// to each photo's download, after its first DATA packet.
final class CaptureGate: Sendable {
    private let path: String
    private let arrivals = Mutex(0)

    init(path: String) {
        self.path = path
    }

    /// Counts a capture in; returns its number (from 1).
    func arrive() -> Int {
        arrivals.withLock { count in
            count += 1
            return count
        }
    }

    /// Blocks (on the capture's own thread) until capture `number` is released, saying so
    /// in the log.
    func hold(_ number: Int, what: String = "capture", log: @Sendable (String) -> Void) {
        guard lines() < number else { return }
        log("\(what) \(number) waits at the gate \(path)")
        while lines() < number { usleep(5_000) }
        log("\(what) \(number) released by the gate")
    }

    private func lines() -> Int {
        (FileManager.default.contents(atPath: path) ?? Data()).reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
    }
}
