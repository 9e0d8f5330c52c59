#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// One camera's worker process, as the backend sees it: started, asked, watched, and
/// started again when it crashes or hangs.
///
/// libgphoto2 runs only in the worker (`shutterpipe-camera-worker`, installed next to
/// `shutterpipe`): a segfault on damaged camera data ends the worker, not the session;
/// a call that never returns is ended by killing the worker; and libgphoto2 can close
/// the worker's descriptor 0 (it does, when it drops a PTP/IP camera) without touching
/// the session's standard input. The worker's standard input is /dev/null, its HOME the
/// camera's own settings folder, its standard error and libgphoto2's log go to the
/// session's log.
final class CameraWorker: Sendable {
    /// The camera's name in the pipeline.
    let name: String
    private let log: Logger
    private let pending = PendingRequests()
    private let listeners = Mutex<(event: @Sendable (WorkerEvent, [Int32]) -> Void, restart: @Sendable () -> FirstRequest?)>(
        ({ _, descriptors in descriptors.forEach { _ = close($0) } }, { nil }))

    /// What a replacement worker gets first, and who hears its id.
    struct FirstRequest: Sendable {
        let request: WorkerRequest
        let sent: @Sendable (UInt64) -> Void
    }

    /// A worker process: the child and the channel to it.
    struct WorkerProcess: Sendable {
        let child: ChildProcess
        let channel: MessageChannel
    }
    private typealias Running = WorkerLifecycle<WorkerProcess>.Generation
    /// Held only for a transition, never across a spawn or a write.
    private let state = Mutex(WorkerLifecycle<WorkerProcess>())
    private let launcher: WorkerLauncher

    /// A worker for the camera `name`, whose settings folder is `settingsFolder/name`.
    /// Nothing starts until the first request. `forwardingLibraryLog`: libgphoto2's own
    /// error messages go into the log, at debug level (``GPhoto2Backend/Options/libgphoto2Log``).
    /// `confinement`: what the worker is confined to (its TCP ports, on or off);
    /// `user`: the user it switches to when the session is root (nil: ``WorkerUser/defaultName``);
    /// `executable`: the worker program (nil: ``WorkerLauncher/executable()``).
    init(name: String, settingsFolder: String, log: Logger, forwardingLibraryLog: Bool = false,
         confinement: WorkerConfinement = WorkerConfinement(), user: String? = nil, executable: String? = nil) {
        self.name = name
        self.log = log
        launcher = WorkerLauncher(camera: name, home: "\(settingsFolder)/\(name)", log: log, forwardsLibraryLog: forwardingLibraryLog,
                                  confinement: confinement, userName: user, program: executable)
    }

    /// - Parameters:
    ///   - onEvent: what the worker says unasked; the callee owns the descriptors.
    ///   - onRestart: when a new worker replaces one that ended: the request that opens
    ///     the camera again, sent before the new worker is handed to anyone else.
    func connect(onEvent: @escaping @Sendable (WorkerEvent, [Int32]) -> Void, onRestart: @escaping @Sendable () -> FirstRequest?) {
        listeners.withLock { $0 = (onEvent, onRestart) }
    }

    // MARK: Asking

    /// Sends `request` at once and returns its id; ``reply(to:)`` waits for the answer.
    /// Sending every camera's capture first and waiting after is what fires a rig at one
    /// moment. With no worker running, the request waits for the one being started (on a
    /// thread of its own: this never blocks on a spawn); a worker found gone is replaced.
    func send(_ request: WorkerRequest) -> UInt64 {
        for attempt in 1...2 {
            let (route, id) = state.withLock { state -> (WorkerLifecycle<WorkerProcess>.Route, UInt64) in
                var id: UInt64 = 0
                let route = state.route { generation in
                    id = pending.register(generation: generation)
                    return WorkerEnvelope(id: id, request: request)
                }
                if case .now(let running) = route { id = pending.register(generation: running.number) }
                return (route, id)
            }
            switch route {
            case .waiting(_, let start):
                if let start { startWorker(generation: start) }
                return id
            case .now(let running):
                do {
                    try WorkerProtocol.send(WorkerEnvelope(id: id, request: request), over: running.worker.channel)
                    return id
                } catch {
                    // It died and its reader has not seen it yet: replace it and send again.
                    pending.fail(id, with: ShutterError(.cameraFailure, "the camera worker for '\(name)' could not be reached: \(error)"))
                    if attempt == 2 { return id }
                    retire(running, waitingForItsEnd: false)
                }
            }
        }
        preconditionFailure("unreachable")
    }

    /// Waits for the answer to request `id`. When the waiting task is cancelled (a
    /// deadline passed), this throws at once; a request the worker had begun is stuck in
    /// libgphoto2, so the worker is killed and started again; one still waiting its turn
    /// (behind a camera being opened again, say) is skipped instead.
    func reply(to id: UInt64) async throws -> PendingRequests.Answer {
        try await withTaskCancellationHandler {
            try await pending.wait(for: id)
        } onCancel: {
            // Still waiting for a worker being started: it is never sent.
            let unsent = state.withLock { $0.withdraw(id) }
            if unsent {
                _ = pending.abandon(id)
                pending.fail(id, with: ShutterError(.timeout, "given up before the camera worker for '\(name)' had started"))  // clears its slot
            } else if pending.abandon(id) {
                kill(because: "the camera worker for '\(name)' did not answer in time; killed and restarted")
            } else if let channel = state.withLock({ ($0.running ?? $0.delivering)?.worker.channel }) {
                // Sent, not begun: the worker skips it (it keeps the id even when the
                // request itself comes after, from a worker still being given what waited).
                try? WorkerProtocol.send(WorkerEnvelope(id: 0, request: .abandon(id)), over: channel)
            }
        }
    }

    /// ``send(_:)`` and ``reply(to:)`` in one; a failed reply is thrown.
    func request(_ request: WorkerRequest) async throws -> WorkerReply {
        let (reply, descriptors, _) = try await reply(to: send(request))
        descriptors.forEach { _ = close($0) }
        if case .failed(let failure) = reply { throw failure.error }
        return reply
    }

    // MARK: The process

    /// Starts a worker unless one runs or is being started.
    private func scheduleStart() {
        if let generation = state.withLock({ $0.reserveStart() }) { startWorker(generation: generation) }
    }

    /// Starts worker `generation` on a thread of its own (one start at a time: the
    /// `starting` flag). A replacement gets the restart request first, then what waited,
    /// in order; only then is it published, so no capture reaches it before its camera is
    /// open and nothing overtakes what waited.
    private func startWorker(generation: Int) {
        OwnedThread.start("shutterpipe worker start \(name)") { [self] in
            let running: Running
            do { running = try spawn(generation) } catch {
                let waiting = state.withLock { $0.startFailed() }
                let failure = ShutterError.wrapping(error, as: .cameraFailure)
                if waiting.isEmpty { log.error("\(failure)", [("camera", name)]) }
                for envelope in waiting { pending.fail(envelope.id, with: failure) }
                return
            }
            state.withLock { $0.spawned(running) }
            OwnedThread.start("shutterpipe worker \(name)") { [self, running] in self.read(running) }
            var first: (FirstRequest, UInt64)?
            if generation > 1, !state.withLock({ $0.stopping }), let request = listeners.withLock({ $0.restart })() {
                let id = pending.register(generation: generation)
                deliver(WorkerEnvelope(id: id, request: request.request), to: running)
                first = (request, id)
            }
            while true {
                let waiting = state.withLock { $0.takeWaitingOrPublish() }
                if waiting.isEmpty { break }
                for envelope in waiting { deliver(envelope, to: running) }
            }
            if let (request, id) = first { request.sent(id) }
        }
    }

    /// Writes `envelope` to a worker not yet published; a failure fails its request.
    private func deliver(_ envelope: WorkerEnvelope, to running: Running) {
        do { try WorkerProtocol.send(envelope, over: running.worker.channel) } catch {
            pending.fail(envelope.id, with: ShutterError(.cameraFailure, "the camera worker for '\(name)' could not be reached: \(error)"))
        }
    }

    private func spawn(_ generation: Int) throws(ShutterError) -> Running {
        let (child, channel) = try launcher.launch()
        return Running(worker: WorkerProcess(child: child, channel: channel), number: generation)
    }

    /// Reads what the worker sends until it ends.
    private func read(_ running: Running) {
        while let (data, descriptors) = (try? running.worker.channel.receive()) ?? nil {
            guard let message = try? WorkerProtocol.decode(WorkerMessage.self, from: data) else {
                descriptors.forEach { _ = close($0) }
                log.warning("camera worker '\(name)' sent a malformed message")
                continue
            }
            switch message {
            case .started(let id):
                // Begun although its caller gave up (the skip came too late): stuck with
                // nobody to wait for it, so the worker goes.
                if !pending.markStarted(id) { kill(because: "the camera worker for '\(name)' did not answer in time; killed and restarted") }
            case .reply(let id, let reply):
                pending.deliver(id, (reply, descriptors, WorkerProtocol.monotonicNanoseconds()))
            case .event(let event):
                listeners.withLock { $0.event }(event, descriptors)
            }
        }
        retire(running, waitingForItsEnd: true)
    }

    /// Worker `running` is gone (or going): what it was asked fails, saying why, and a
    /// new one starts. `waitingForItsEnd` (on the reader's own thread, never the pool)
    /// waits for its exit status to say how it ended.
    private func retire(_ running: Running, waitingForItsEnd: Bool) {
        guard let ended = state.withLock({ $0.retire(running.number) }) else { return }
        let (because, stopping) = (ended.killedBecause, ended.stopping)
        running.worker.channel.shutDown()
        running.worker.child.signal(SIGKILL)
        // Killed, it ends at once; but on a loaded machine a process can wait seconds for a
        // core to be reaped, and then a crash was said as "stopped answering".
        let status = waitingForItsEnd ? running.worker.child.waitUntilExit(timeout: .seconds(10)) : running.worker.child.status
        let what: String
        switch status {
        case .signalled(SIGSYS)?: what = "was killed by its sandbox (SIGSYS: a system call libgphoto2 never needs, as a device that took it over would make)"
        case .signalled(let signal)?: what = "crashed with \(ChildProcess.ExitStatus.name(ofSignal: signal))"
        case .exited(let code)?: what = "exited with \(code)"
        case nil: what = "stopped answering"
        }
        let reason = because ?? "the camera worker for '\(name)' \(what); restarted"
        pending.failAll(sentTo: running.number, with: ShutterError(.cameraFailure, reason,
                                                                       fix: "the next shot uses a new worker; see the log for what libgphoto2 said"))
        guard !stopping else { return }
        log.warning(reason, [("event", "workerRestarted"), ("camera", name)])
        // On a thread of its own (this may be a cancellation handler, which must not
        // block); a request meanwhile finds no running worker and waits for this one.
        scheduleStart()
    }

    /// Kills the worker (a hung libgphoto2 call); what it was asked fails with `reason`,
    /// and a new worker starts at once, on a thread of its own (this is called from a
    /// cancellation handler, which must not block), so that the next request never goes
    /// to the one being killed.
    func kill(because reason: String) {
        guard let running = state.withLock({ $0.kill(because: reason) }) else { return }
        running.worker.child.signal(SIGKILL)
        retire(running, waitingForItsEnd: false)
    }

    /// Ends the worker for good: it closes the camera when its socket closes; one that
    /// does not end within two seconds is killed.
    func stop() async {
        guard let running = state.withLock({ $0.stop() }) else { return }
        running.worker.channel.shutDown()
        let ended = await withTaskGroup(of: Bool.self) { group in
            group.addTask { _ = await running.worker.child.exitStatus(); return true }
            group.addTask { try? await Task.sleep(for: .seconds(2)); return false }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        if !ended { running.worker.child.signal(SIGKILL) }
    }
}
