import Foundation
import ShutterPipeFixtures
import Synchronization

/// Damages packets on their way out, for fuzzing the PTP/IP client side (`--malformed`).
/// Seeded, so a run can be replayed. Each damaged packet gets one of: a length field that
/// lies (too long, too short, zero), a cut payload, an unknown packet type, flipped bytes,
/// or garbage in place of the packet.
final class Corruptor: Sendable {
    private let percent: Int
    private let state: Mutex<(random: SeededRandom, damaged: Int)>

    init(percent: Int, seed: UInt64) {
        self.percent = percent
        state = Mutex((SeededRandom(seed: seed), 0))
    }

    /// Packets damaged so far.
    var damaged: Int { state.withLock { $0.damaged } }

    /// `packet` as sent: usually as it is; `percent` % of the time, damaged.
    func pass(_ packet: [UInt8]) -> [UInt8] {
        state.withLock { state in
            func next() -> UInt64 { state.random.next() }
            guard Int(next() % 100) < percent, packet.count >= 8 else { return packet }
            state.damaged += 1
            var bytes = packet
            func setLength(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { for i in 0..<4 { bytes[i] = $0[i] } } }
            switch next() % 7 {
            case 0: setLength(UInt32(packet.count) + UInt32(next() % 4096) + 1)  // claims more than follows
            case 1: setLength(UInt32(next() % 8))  // shorter than its own header
            case 2: setLength(0xFFFF_FFF0)
            case 3: bytes = Array(bytes.prefix(Int(next() % UInt64(bytes.count))))  // cut short
            case 4: withUnsafeBytes(of: UInt32(next() % 0xFFFF + 0x20).littleEndian) { for i in 0..<4 { bytes[4 + i] = $0[i] } }  // unknown type
            case 5: for _ in 0..<(1 + next() % 8) { bytes[Int(next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: next()) }
            default: bytes = (0..<(8 + next() % 64)).map { _ in UInt8(truncatingIfNeeded: next()) }
            }
            return bytes
        }
    }
}
