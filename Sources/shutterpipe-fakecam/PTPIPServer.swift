#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// A PTP/IP responder on 127.0.0.1: the command and event channels of CIPA DC-005, as
/// libgphoto2's `ptpip` port driver speaks them. One thread per connection, blocking I/O.
final class PTPIPServer: Sendable {
    let camera: VirtualCamera
    private let listener: Int32
    let port: UInt16
    private let eventSocket = Mutex<Int32?>(nil)
    private let commandSockets = Mutex<[Int32]>([])
    let log: @Sendable (String) -> Void
    let corruptor: Corruptor?
    let shortTransfersLeft: Mutex<Int>
    private let gate: CaptureGate?
    /// `--download-gate`: holds each photo's download after its first DATA packet.
    let downloadGate: CaptureGate?
    /// The objects whose download the gate held already.
    private let heldDownloads = Mutex<Set<UInt32>>([])
    /// SIGUSR2: the cable pulled (every connection ends, new ones are refused; the button
    /// still takes shots, which nobody hears of), and plugged in again.
    let unplugged = Atomic<Bool>(false)

    init(camera: VirtualCamera, log: @escaping @Sendable (String) -> Void) throws {
        self.camera = camera
        self.log = log
        gate = camera.options.gate.map(CaptureGate.init)
        downloadGate = camera.options.downloadGate.map(CaptureGate.init)
        shortTransfersLeft = Mutex(camera.options.shortTransfers)
        corruptor = camera.options.malformedPercent > 0 ? Corruptor(percent: camera.options.malformedPercent, seed: camera.options.seed) : nil
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        guard listener >= 0 else { throw ServerError("socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = camera.options.port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0 else { throw ServerError("cannot listen on 127.0.0.1:\(camera.options.port): \(String(cString: strerror(errno)))") }
        guard listen(listener, 8) == 0 else { throw ServerError("listen: \(String(cString: strerror(errno)))") }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        self.port = UInt16(bigEndian: actual.sin_port)
    }

    /// Accepts connections until the process ends.
    func serve() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 { if errno == EINTR { continue }; return }
            var yes: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            OwnedThread.start("fakecam client") { [self] in self.handle(client) }
        }
    }

    /// Pulls the cable, or plugs it in again.
    func toggleCable() {
        let pulled = !unplugged.load(ordering: .sequentiallyConsistent)
        unplugged.store(pulled, ordering: .sequentiallyConsistent)
        if pulled {
            // The host's reads and writes fail from now on, as on a pulled USB cable.
            commandSockets.withLock { $0.forEach { _ = shutdown($0, Int32(SHUT_RDWR)) } }
            eventSocket.withLock { socket in socket.map { _ = shutdown($0, Int32(SHUT_RDWR)) } }
        }
        log(pulled ? "cable pulled" : "cable plugged in")
    }

    /// The camera's own shutter button: a new shot announced on the event channel.
    func pressButton() {
        let handles = camera.pressButton()
        log("button pressed: objects \(handles)")
        announce(handles, transaction: 0xFFFF_FFFF)
    }

    /// ObjectAdded for each handle, with the faults the options ask for.
    private func announce(_ handles: [UInt32], transaction: UInt32) {
        for handle in handles {
            if camera.options.bogusEvents {
                sendEvent(.objectAdded, transaction: transaction, parameter: 0xDEAD_0000 | handle)
                sendEvent(code: 0xC999, transaction: transaction, parameter: handle)
            }
            sendEvent(.objectAdded, transaction: transaction, parameter: handle)
            if camera.options.duplicateEvents { sendEvent(.objectAdded, transaction: transaction, parameter: handle) }
        }
    }

    private func handle(_ client: Int32) {
        defer { close(client) }
        guard let (type, payload) = readPacket(client) else { return }
        switch PTP.Packet(rawValue: type) {
        case .initCommandRequest:
            if camera.options.refuse || unplugged.load(ordering: .sequentiallyConsistent) {
                log("refusing the connection")
                var w = PTPWriter(); w.u32(1)
                sendPacket(client, .initFail, w.data)
                return
            }
            var w = PTPWriter()
            w.u32(1)
            w.bytes(Data((0..<16).map { UInt8($0 * 7 & 0xFF) }))
            for unit in "shutterpipe-fakecam".utf16 { w.u16(unit) }
            w.u16(0)
            w.u16(0); w.u16(1)  // protocol version 1.0
            sendPacket(client, .initCommandAck, w.data)
            commandSockets.withLock { $0.append(client) }
            log("command channel open")
            commandLoop(client)
            commandSockets.withLock { $0.removeAll { $0 == client } }
            log("command channel closed")
        case .initEventRequest:
            _ = payload
            sendPacket(client, .initEventAck, Data())
            eventSocket.withLock { $0 = client }
            log("event channel open")
            // Keep the socket until the host closes it; answer pings.
            while let (type, _) = readPacket(client) {
                if type == PTP.Packet.ping.rawValue { sendPacket(client, .pong, Data()) }
            }
            eventSocket.withLock { if $0 == client { $0 = nil } }
        default:
            log("unexpected first packet type \(type)")
        }
    }

    private func commandLoop(_ client: Int32) {
        while let (type, payload) = readPacket(client) {
            if type == PTP.Packet.ping.rawValue { sendPacket(client, .pong, Data()); continue }
            guard type == PTP.Packet.commandRequest.rawValue else { continue }
            var reader = PTPReader(payload)
            guard let phase = reader.u32(), let code = reader.u16(), let transaction = reader.u32() else { return }
            var parameters: [UInt32] = []
            while let parameter = reader.u32() { parameters.append(parameter) }
            var incoming = Data()
            if phase == 2 {  // host to device: StartData, Data…, EndData
                while let (dataType, dataPayload) = readPacket(client) {
                    if dataType == PTP.Packet.startData.rawValue { continue }
                    guard dataType == PTP.Packet.data.rawValue || dataType == PTP.Packet.endData.rawValue else { break }
                    incoming.append(dataPayload.dropFirst(4))
                    if dataType == PTP.Packet.endData.rawValue { break }
                }
            }
            if code == PTP.Operation.initiateCapture.rawValue || code == PTP.Operation.initiateOpenCapture.rawValue, let path = camera.options.captureLog {
                var now = timespec()
                clock_gettime(CLOCK_MONOTONIC, &now)
                let line = "\(UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec))\n"
                let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
                if descriptor >= 0 {
                    try? DescriptorIO.writeAll(Array(line.utf8), to: descriptor)
                    close(descriptor)
                }
            }
            if camera.options.verbose { log(String(format: "op 0x%04x params %@", code, parameters.description)) }
            if code == PTP.Operation.initiateCapture.rawValue && camera.shouldDropBeforeCapture() {
                log("dropping the connection mid-shoot (--drop-after)")
                dropEverything()
                return
            }
            // libgphoto2 fetches a photo in GetPartialObject pieces of 1 MiB: the gate holds
            // its second piece, once the first is on the wire.
            if code == PTP.Operation.getPartialObject.rawValue, parameters.count > 1, parameters[1] > 0, let downloadGate,
               heldDownloads.withLock({ $0.insert(parameters[0]).inserted }) {
                downloadGate.hold(downloadGate.arrive(), what: "download", log: log)
            }
            let (response, data, responseParameters) = execute(code, parameters, incoming, transaction: transaction)
            if let data { sendData(client, transaction: transaction, data, holding: code == PTP.Operation.getObject.rawValue ? downloadGate : nil) }
            var w = PTPWriter()
            w.u16(response.rawValue); w.u32(transaction)
            responseParameters.forEach { w.u32($0) }
            sendPacket(client, .commandResponse, w.data)
            if code == PTP.Operation.terminateOpenCapture.rawValue && response == .ok {
                announceCapture(transaction: transaction)  // the bulb's files, as a capture's
            }
            if code == PTP.Operation.initiateCapture.rawValue {
                switch lastCapture.withLock({ $0 }) {
                case .success where response == .ok:
                    if camera.cardFilledDuringLastCapture() {
                        // Taken, then the card ran full: StoreFull and no file, nothing else.
                        log("the card ran full during this capture (--card-fills-after)")
                        sendEvent(.storeFull, transaction: transaction, parameter: PTP.storageID)
                    } else if camera.lastCaptureIsEmpty() {
                        log("this capture makes no file (--empty-captures)")
                        sendEvent(.captureComplete, transaction: transaction, parameter: nil)
                    } else if camera.losesEventsOfLastCapture() {
                        log("losing the events of this capture (--lose-events-of)")
                        _ = camera.expose()
                    } else {
                        announceCapture(transaction: transaction)
                    }
                case .failure(.storeFull):
                    // As cameras do: the card's state on the event channel too. Without an
                    // event after a refused capture, libgphoto2 waits for one forever.
                    sendEvent(.storeFull, transaction: transaction, parameter: PTP.storageID)
                    sendEvent(.captureComplete, transaction: transaction, parameter: nil)
                default:
                    break
                }
            }
        }
    }

    /// Operations still to slow down after a slow OpenSession (`--open-delay`).
    let slowSteps = Mutex(0)
    let lastCapture = Mutex<Result<Void, PTP.Response>>(.success(()))

    /// The exposure's files, then ObjectAdded for each, then CaptureComplete, after the
    /// configured delay (as for a long exposure), on a thread of their own.
    private func announceCapture(transaction: UInt32) {
        let delay = camera.options.captureDelay
        let arrival = gate?.arrive()
        OwnedThread.start("fakecam capture") { [self] in
            let handles = camera.expose()
            if delay > .zero { usleep(UInt32(delay.milliseconds * 1000)) }
            if let arrival { gate?.hold(arrival, log: log) }
            announce(handles, transaction: transaction)
            sendEvent(.captureComplete, transaction: transaction, parameter: nil)
            if let arrival { log("capture \(arrival) announced") }  // its events are on their way
        }
    }

    func sendEvent(_ event: PTP.Event, transaction: UInt32, parameter: UInt32?) {
        sendEvent(code: event.rawValue, transaction: transaction, parameter: parameter)
    }

    private func sendEvent(code: UInt16, transaction: UInt32, parameter: UInt32?) {
        eventSocket.withLock { socket in
            guard let socket else { return }
            var w = PTPWriter()
            w.u16(code); w.u32(transaction)
            if let parameter { w.u32(parameter) }
            sendPacket(socket, .event, w.data)
        }
    }

    private func dropEverything() {
        for socket in commandSockets.withLock({ $0 }) { shutdown(socket, Int32(SHUT_RDWR)) }
        eventSocket.withLock { socket in
            if let socket { shutdown(socket, Int32(SHUT_RDWR)) }
        }
    }
}

struct ServerError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
