import CGPhoto2
import Dispatch
import Foundation
import GPhoto2Backend
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// The camera worker's main loop: requests from the backend on descriptor 3, read and
/// answered on the camera thread (every libgphoto2 call runs there, ``CameraThread``);
/// between requests the thread polls the camera for button shots and reconnects it when
/// it went away.
public enum WorkerServer {
    /// Serves until the backend closes its end, then releases the camera and returns.
    /// `confinement`: what ``WorkerSandbox`` applied (nil: the config turned it off), for
    /// the log.
    public static func run(confinement: WorkerSandbox.Outcome?) -> Int32 {
        let channel = MessageChannel(descriptor: WorkerProtocol.socketDescriptor)
        WorkerLog.attach(channel)
        if let confinement {
            WorkerLog.debug(confinement.summary)
            confinement.warnings.forEach { WorkerLog.warning($0) }
            // A driver the confinement keeps out fails as libgphoto2's "Error loading a
            // library": named here, with the option that allows it.
            let refused = DriverFolders.check()
            if !refused.isEmpty {
                WorkerLog.warning("the confined camera worker cannot read \(refused.count) libgphoto2 driver(s): \(DriverFolders.describe(refused)) (fix: \(DriverFolders.fix(refused)))")
            }
        } else {
            WorkerLog.warning("runs unconfined ('confineWorkers: false'): a device that takes libgphoto2 over gets this session's privileges")
        }
        // libgphoto2's own errors, at debug level, when asked for (they cost every download
        // a hexdump: WorkerProtocol.libraryLogVariable): most are noise of its internals,
        // and what matters reaches the answer through the call that failed.
        if ProcessInfo.processInfo.environment[WorkerProtocol.libraryLogVariable] == "1" {
            gp_log_add_func(GP_LOG_ERROR, { _, domain, text, _ in
                WorkerLog.debug("libgphoto2 \(domain.map { String(cString: $0) } ?? ""): \(text.map { String(cString: $0) } ?? "")")
            }, nil)
        }
        let session = CameraSession { message, descriptors in
            try? WorkerProtocol.send(message, over: channel, descriptors: descriptors)
        }
        let abandoned = Mutex<Set<UInt64>>([])
        let sourceEnded = DispatchSemaphore(value: 0)
        // Read on the camera thread itself (CameraThread.Source): one request per call.
        let read: (CameraThread) -> Bool = { camera in
            let received: (message: Data, descriptors: [Int32])?
            do throws(SystemError) { received = try channel.receive() } catch {
                WorkerLog.warning("\(error)")
                if error.code == EMSGSIZE { return true }  // that one message is lost, not the channel
                sourceEnded.signal()
                return false
            }
            guard let (data, descriptors) = received else {
                sourceEnded.signal()
                return false
            }
            descriptors.forEach { _ = close($0) }
            guard let envelope = try? WorkerProtocol.decode(WorkerEnvelope.self, from: data) else {
                WorkerLog.warning("ignored a malformed request")
                return true
            }
            if case .abandon(let id) = envelope.request {
                abandoned.withLock { _ = $0.insert(id) }
                return true
            }
            camera.submit(envelope.request) {
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
            }
            return true
        }
        // The drivers load first, while the backend is still sending its first request.
        let camera = CameraThread(name: "shutterpipe camera", interval: { session.pollInterval }, tick: { session.tick() },
                                  source: CameraThread.Source(descriptor: channel.descriptor, read: read),
                                  first: { CameraDrivers.shared.preload() }, startNow: false)
        session.runQueuedDeletes = { path in
            camera.runQueuedNow { request in
                if case .delete(let paths) = request { return paths.contains(path) }
                return false
            }
        }
        session.runQueuedDuringExposure = {
            camera.runQueuedNow { request in
                switch request {
                case .preview, .delete: true
                default: false
                }
            }
        }
        session.requestsWaiting = { camera.hasWaitingRequests() }
        camera.start()
        sourceEnded.wait()
        camera.finish {
            session.runDeletesBeforeClosing()
            session.close()
        }
        return 0
    }
}
