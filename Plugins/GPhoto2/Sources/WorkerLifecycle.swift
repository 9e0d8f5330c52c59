/// A camera worker's lifecycle as one value: which worker runs, which one is being
/// started, what waits for it, and whether the worker is being stopped or killed. Every
/// change is one of the transitions below, made under ``CameraWorker``'s lock and tested
/// one by one (`WorkerLifecycleTests`); the process work (spawning, writing, killing)
/// happens outside, with what a transition returned.
///
/// The rules:
/// - at most one start at a time, and each start has a generation one higher;
/// - a request sent while no worker runs waits, in order, for the one being started;
/// - a started worker is published only once everything that waited is written to it
///   (and, for a replacement, the request that opens the camera again, before them);
/// - only the current worker can be retired, once; its end says why it was killed, if it was;
/// - once stopping, a worker that ends is not replaced (until a new start publishes one).
struct WorkerLifecycle<Worker: Sendable>: Sendable {
    /// A worker process and the generation it was started as.
    struct Generation: Sendable {
        let worker: Worker
        let number: Int
    }

    /// Where a request goes: to the running worker now, or into the queue of the one being
    /// started (and whether the caller must start it).
    enum Route {
        case now(Generation)
        case waiting(generation: Int, start: Int?)
    }

    private(set) var running: Generation?
    /// The newest worker's generation, counted when its start is reserved.
    private(set) var generation = 0
    /// A start is under way: requests wait in ``waiting``.
    private(set) var starting = false
    /// Requests sent while no worker runs, in order.
    private(set) var waiting: [WorkerEnvelope] = []
    /// The worker being started, once spawned and until published: what waited is written
    /// to it, and a request given up meanwhile is abandoned through it.
    private(set) var delivering: Generation?
    private(set) var stopping = false
    /// Why the running worker is being killed, for the message its end gives.
    private(set) var killedBecause: String?

    /// A request: to the running worker, or queued for the next (a start reserved when none
    /// is under way), as `envelope` makes it for the generation it waits for.
    mutating func route(_ envelope: (_ generation: Int) -> WorkerEnvelope) -> Route {
        if let running { return .now(running) }
        let start = reserveStart()
        waiting.append(envelope(generation))
        return .waiting(generation: generation, start: start)
    }

    /// Reserves a start unless a worker runs or one is under way: its generation, or nil.
    mutating func reserveStart() -> Int? {
        guard running == nil, !starting else { return nil }
        starting = true
        generation += 1
        return generation
    }

    /// The start failed: no start is under way, and what waited is handed back (to fail).
    mutating func startFailed() -> [WorkerEnvelope] {
        starting = false
        defer { waiting = [] }
        return waiting
    }

    /// The worker being started is spawned: what waits goes to it.
    mutating func spawned(_ started: Generation) {
        delivering = started
    }

    /// What still waits for the worker being started (handed over, to write to it); when
    /// nothing does, the worker is published: it runs, and the start is over.
    mutating func takeWaitingOrPublish() -> [WorkerEnvelope] {
        guard waiting.isEmpty else {
            defer { waiting = [] }
            return waiting
        }
        if let delivering { running = delivering }
        delivering = nil
        starting = false
        stopping = false
        return []
    }

    /// Removes a request that still waits for a worker (its caller gave up): whether it did.
    mutating func withdraw(_ id: UInt64) -> Bool {
        guard let index = waiting.firstIndex(where: { $0.id == id }) else { return false }
        waiting.remove(at: index)
        return true
    }

    /// How the current worker's end is told.
    struct Ended: Equatable {
        /// Why it was killed, if it was.
        var killedBecause: String?
        /// It is being stopped: not replaced.
        var stopping: Bool
    }

    /// Worker `number` ended (or is ending). If it is the current one, it no longer runs,
    /// and this says how to tell its end; nil for a worker already retired or replaced.
    mutating func retire(_ number: Int) -> Ended? {
        guard running?.number == number else { return nil }
        running = nil
        defer { killedBecause = nil }
        return Ended(killedBecause: killedBecause, stopping: stopping)
    }

    /// The running worker is to be killed, for `reason` (the first reason given stands).
    mutating func kill(because reason: String) -> Generation? {
        if killedBecause == nil { killedBecause = reason }
        return running
    }

    /// The worker is stopped for good: one that ends now is not replaced.
    mutating func stop() -> Generation? {
        stopping = true
        return running
    }
}
