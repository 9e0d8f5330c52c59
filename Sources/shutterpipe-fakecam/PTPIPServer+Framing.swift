#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// Framing: PTP/IP packets and data phases on the command and event sockets.
extension PTPIPServer {
    /// `holding`: a gate that holds the rest of the data after the first DATA packet
    /// (`--download-gate`: a photo's front is on the wire, its rest waits for the test).
    func sendData(_ client: Int32, transaction: UInt32, _ data: Payload, holding: CaptureGate? = nil) {
        var start = PTPWriter(); start.u32(transaction); start.u64(UInt64(data.count))
        sendPacket(client, .startData, start.data)
        var end = PTPWriter(); end.u32(transaction)
        if corruptor != nil {  // damage is decided over the whole packet
            end.bytes(data.bytes(in: 0..<data.count))
            sendPacket(client, .endData, end.data)
            return
        }
        // As cameras do, a large object goes in DATA packets and the last piece in END_DATA:
        // libgphoto2 hands each packet on as it arrives (what its download progress sees).
        let pieces = Self.pieces(of: data, size: Self.dataPacketSize)
        let pace = camera.options.linkBytesPerSecond
        let began = ContinuousClock.now
        var sent = 0
        for (index, piece) in pieces.enumerated() {
            let last = index == pieces.count - 1
            let length = piece.reduce(0) { $0 + $1.count }
            var header = PTPWriter()
            header.u32(UInt32(8 + end.data.count + length)); header.u32((last ? PTP.Packet.endData : PTP.Packet.data).rawValue)
            try? DescriptorIO.writeAll(header.data + end.data, to: client)
            for part in piece { try? DescriptorIO.writeAll(part, to: client) }  // straight from the card's storage
            sent += length
            if index == 0, !last, let holding {
                let download = holding.arrive()
                holding.hold(download, what: "download", log: log)
            }
            if pace > 0 {
                let due = began + .nanoseconds(Int64(Double(sent) / Double(pace) * 1e9))
                let wait = due - ContinuousClock.now
                if wait > .zero { Thread.sleep(forTimeInterval: wait.inSeconds) }
            }
        }
    }

    /// The size of a DATA packet's payload (cameras use tens to hundreds of kilobytes).
    static let dataPacketSize = 512 * 1024

    /// The payload cut into pieces of at most `size` bytes, as slices of its parts (no
    /// copy); an empty payload is one empty piece.
    static func pieces(of payload: Payload, size: Int) -> [[Data]] {
        var pieces: [[Data]] = []
        var current: [Data] = []
        var room = size
        for part in payload.parts {
            var offset = part.startIndex
            while offset < part.endIndex {
                let take = min(room, part.endIndex - offset)
                current.append(part[offset..<(offset + take)])
                offset += take
                room -= take
                if room == 0 {
                    pieces.append(current)
                    current = []
                    room = size
                }
            }
        }
        if !current.isEmpty || pieces.isEmpty { pieces.append(current) }
        return pieces
    }

    func sendPacket(_ client: Int32, _ type: PTP.Packet, _ payload: Data) {
        var header = PTPWriter()
        header.u32(UInt32(8 + payload.count)); header.u32(type.rawValue)
        if let corruptor {
            let before = corruptor.damaged
            let sent = corruptor.pass(Array(header.data) + Array(payload))
            if corruptor.damaged != before { log("sent a malformed \(type) packet (\(corruptor.damaged) so far)") }
            try? DescriptorIO.writeAll(sent, to: client)
            return
        }
        try? DescriptorIO.writeAll(header.data, to: client)
        if !payload.isEmpty { try? DescriptorIO.writeAll(payload, to: client) }
    }

    func readPacket(_ client: Int32) -> (UInt32, Data)? {
        guard let header = readExactly(client, 8) else { return nil }
        var reader = PTPReader(header)
        guard let length = reader.u32(), let type = reader.u32(), length >= 8, length < 64 * 1024 * 1024 else { return nil }
        guard let payload = readExactly(client, Int(length) - 8) else { return nil }
        return (type, payload)
    }

    private func readExactly(_ client: Int32, _ count: Int) -> Data? {
        var buffer = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            let received = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress! + offset, count - offset, 0) }
            if received < 0 && errno == EINTR { continue }
            if received <= 0 { return nil }
            offset += received
            var yes: Int32 = 1  // no delayed ACK: libgphoto2 sends requests in small pieces
            setsockopt(client, Int32(IPPROTO_TCP), TCP_QUICKACK, &yes, socklen_t(MemoryLayout<Int32>.size))
        }
        return Data(buffer)
    }
}
