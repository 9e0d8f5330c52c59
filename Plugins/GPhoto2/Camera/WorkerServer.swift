import CGPhoto2
import Dispatch
import Foundation
import GPhoto2Backend
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// The camera worker's main loop: requests from the backend on descriptor 3, answered on
/// a queue of their own (every libgphoto2 call runs there); between requests the queue
/// polls the camera for button shots and reconnects it when it went away.
public enum WorkerServer {
    /// Serves until the backend closes its end, then releases the camera and returns.
    public static func run() -> Int32 {
        let channel = MessageChannel(descriptor: WorkerProtocol.socketDescriptor)
        WorkerLog.attach(channel)
        // libgphoto2's own errors, at debug level: most are noise of its internals, and what
        // matters reaches the answer through the call that failed.
        gp_log_add_func(GP_LOG_ERROR, { _, domain, text, _ in
            WorkerLog.debug("libgphoto2 \(domain.map { String(cString: $0) } ?? ""): \(text.map { String(cString: $0) } ?? "")")
        }, nil)
        let queue = DispatchQueue(label: "shutterpipe camera")
        let session = CameraSession { message, descriptors in
            try? WorkerProtocol.send(message, over: channel, descriptors: descriptors)
        }
        queue.async { CameraDrivers.shared.preload() }  // while the backend is still sending its first request
        let ticker = Ticker(queue: queue, session: session)
        let abandoned = Mutex<Set<UInt64>>([])
        while true {
            let received: (message: Data, descriptors: [Int32])?
            do { received = try channel.receive() } catch { WorkerLog.warning("\(error)"); continue }
            guard let (data, descriptors) = received else { break }
            descriptors.forEach { _ = close($0) }
            guard let envelope = try? WorkerProtocol.decode(WorkerEnvelope.self, from: data) else {
                WorkerLog.warning("ignored a malformed request")
                continue
            }
            if case .abandon(let id) = envelope.request {
                abandoned.withLock { _ = $0.insert(id) }
                continue
            }
            queue.async {
                if abandoned.withLock({ $0.remove(envelope.id) }) != nil {
                    try? WorkerProtocol.send(WorkerMessage.reply(id: envelope.id, .failed(WorkerFailure(ShutterError(.timeout, "abandoned before it started")))), over: channel)
                    return
                }
                try? WorkerProtocol.send(WorkerMessage.started(id: envelope.id), over: channel)
                let (reply, attached) = session.handle(envelope.request)
                do {
                    try WorkerProtocol.send(WorkerMessage.reply(id: envelope.id, reply), over: channel, descriptors: attached)
                } catch {
                    WorkerLog.warning("could not send a reply: \(error)")
                }
                attached.forEach { _ = close($0) }
                ticker.reschedule()
            }
        }
        ticker.stop()
        queue.sync { session.close() }
        return 0
    }
}

/// Runs the session's tick on the camera queue at its poll interval.
private final class Ticker: @unchecked Sendable {  // touched on the camera queue
    private let timer: any DispatchSourceTimer
    private let session: CameraSession
    private var interval: Duration = .milliseconds(250)

    init(queue: DispatchQueue, session: CameraSession) {
        self.session = session
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [session] in session.tick() }
        timer.schedule(deadline: .now() + .milliseconds(250), repeating: .milliseconds(250))
        timer.resume()
    }

    /// Takes a new poll interval from the session (after an open).
    func reschedule() {
        let wanted = session.pollInterval
        guard wanted != interval else { return }
        interval = wanted
        let milliseconds = Int(wanted.components.seconds) * 1000 + Int(wanted.components.attoseconds / 1_000_000_000_000_000)
        timer.schedule(deadline: .now() + .milliseconds(milliseconds), repeating: .milliseconds(milliseconds))
    }

    func stop() { timer.cancel() }
}
