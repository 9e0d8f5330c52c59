@testable import GPhoto2Backend
import Testing

/// A camera worker's lifecycle, transition by transition (``WorkerLifecycle``): the rules
/// that ``CameraWorker`` keeps under its lock, without a process. A worker is a name here.
@Suite("a camera worker's lifecycle, one transition at a time", .timeLimit(.minutes(1)))
struct WorkerLifecycleTests {
    typealias Lifecycle = WorkerLifecycle<String>

    static func envelope(_ id: UInt64) -> (Int) -> WorkerEnvelope { { _ in WorkerEnvelope(id: id, request: .status) } }

    /// A lifecycle whose worker `name` runs as generation 1.
    static func running(_ name: String = "first") -> Lifecycle {
        var lifecycle = Lifecycle()
        _ = lifecycle.reserveStart()
        lifecycle.spawned(.init(worker: name, number: 1))
        let waited = lifecycle.takeWaitingOrPublish()
        #expect(waited.isEmpty)
        return lifecycle
    }

    @Test("the first request reserves the one start (generation 1); the next ones wait behind it, in order, reserving none")
    func firstRequestStarts() {
        var lifecycle = Lifecycle()
        var generations: [Int] = []
        guard case .waiting(let generation, let start) = lifecycle.route({ generations.append($0); return WorkerEnvelope(id: 1, request: .status) }) else {
            Issue.record("a request with no worker must wait")
            return
        }
        #expect(generation == 1 && start == 1 && generations == [1] && lifecycle.starting)
        for id in 2...3 {
            guard case .waiting(let generation, let start) = lifecycle.route(Self.envelope(UInt64(id))) else { Issue.record("must wait"); return }
            #expect(generation == 1 && start == nil)
        }
        #expect(lifecycle.waiting.map(\.id) == [1, 2, 3])
        let again = lifecycle.reserveStart()
        #expect(again == nil, "one start at a time")
    }

    @Test("a spawned worker gets everything that waited, then is published: requests go to it at once, and the start is over")
    func publish() {
        var lifecycle = Lifecycle()
        _ = lifecycle.route(Self.envelope(1))
        lifecycle.spawned(.init(worker: "first", number: 1))
        #expect(lifecycle.running == nil && lifecycle.delivering?.worker == "first")
        _ = lifecycle.route(Self.envelope(2))  // while the first is written to it
        let waited = lifecycle.takeWaitingOrPublish()
        #expect(waited.map(\.id) == [1, 2])
        #expect(lifecycle.running == nil, "not published while something may still have come")
        let nothing = lifecycle.takeWaitingOrPublish()
        #expect(nothing.isEmpty)
        #expect(lifecycle.running?.worker == "first" && lifecycle.delivering == nil && !lifecycle.starting)
        guard case .now(let worker) = lifecycle.route(Self.envelope(3)) else { Issue.record("must go to the running worker"); return }
        #expect(worker.worker == "first" && lifecycle.waiting.isEmpty)
    }

    @Test("a start that fails hands back what waited (to fail it) and lets the next request start again, a generation higher")
    func failedStart() {
        var lifecycle = Lifecycle()
        _ = lifecycle.route(Self.envelope(1))
        _ = lifecycle.route(Self.envelope(2))
        let handedBack = lifecycle.startFailed()
        #expect(handedBack.map(\.id) == [1, 2])
        #expect(!lifecycle.starting && lifecycle.waiting.isEmpty)
        guard case .waiting(let generation, let start) = lifecycle.route(Self.envelope(3)) else { Issue.record("must wait"); return }
        #expect(generation == 2 && start == 2)
    }

    @Test("a request given up while it waits is withdrawn, once; one already written is not")
    func withdraw() {
        var lifecycle = Lifecycle()
        _ = lifecycle.route(Self.envelope(1))
        _ = lifecycle.route(Self.envelope(2))
        let first = lifecycle.withdraw(1), second = lifecycle.withdraw(1)
        #expect(first && !second)
        #expect(lifecycle.waiting.map(\.id) == [2])
    }

    @Test("retiring: only the current worker, once; a kill's reason is its end's message and is then forgotten; an old worker's end changes nothing")
    func retire() {
        var lifecycle = Self.running()
        let killed = lifecycle.kill(because: "hung"), killedAgain = lifecycle.kill(because: "later reason")
        #expect(killed?.worker == "first" && killedAgain != nil)
        let other = lifecycle.retire(7)
        #expect(other == nil, "a worker of another generation")
        let ended = lifecycle.retire(1), endedAgain = lifecycle.retire(1)
        #expect(ended == WorkerLifecycle<String>.Ended(killedBecause: "hung", stopping: false))
        #expect(endedAgain == nil, "retired once")
        #expect(lifecycle.running == nil && lifecycle.killedBecause == nil)
        // Its replacement is generation 2; the first's late end does not touch it.
        let next = lifecycle.reserveStart()
        #expect(next == 2)
        lifecycle.spawned(.init(worker: "second", number: 2))
        _ = lifecycle.takeWaitingOrPublish()
        let late = lifecycle.retire(1)
        #expect(late == nil && lifecycle.running?.worker == "second")
    }

    @Test("stopping: the worker that ends then says so (not replaced); a new start clears it")
    func stop() {
        var lifecycle = Self.running()
        let stopped = lifecycle.stop()
        #expect(stopped?.worker == "first")
        let ended = lifecycle.retire(1)
        #expect(ended?.stopping == true)
        let next = lifecycle.reserveStart()
        #expect(next == 2)
        lifecycle.spawned(.init(worker: "second", number: 2))
        _ = lifecycle.takeWaitingOrPublish()
        #expect(!lifecycle.stopping)
        var idle = Lifecycle()
        let none = idle.stop()
        #expect(none == nil, "nothing runs: nothing to stop")
    }
}
