import Foundation
import Synchronization
import Testing

/// A gate that a test holds, for test doubles in this process: work that reaches it (a
/// capture, a store, a finish) waits there until the test lets it through. The test
/// waits until the work has arrived, acts (queues more events, shuts down), then releases
/// it: a state reached for certain, never a duration guessed.
///
/// Arrivals are numbered from 1; ``release(_:)`` lets the next ones through, ``open()``
/// every one from now on.
public final class Gate: Sendable {
    private struct Waiter {
        let number: Int
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var arrived = 0
        var released = 0
        var open = false
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())
    private let name: String

    /// A closed gate (or an open one, which only counts arrivals), named for messages.
    public init(_ name: String = "gate", open: Bool = false) {
        self.name = name
        state.withLock { $0.open = open }
    }

    /// How many have arrived so far.
    public var arrivals: Int { state.withLock { $0.arrived } }

    /// Arrives and waits until released. With `honouringCancellation`, a cancelled task
    /// leaves at once and this throws `CancellationError` (a capture at its deadline);
    /// otherwise it waits whatever happens (a backend that ignores cancellation).
    public func pass(honouringCancellation: Bool = true) async throws {
        let (number, go) = state.withLock { state -> (Int, Bool) in
            state.arrived += 1
            return (state.arrived, state.open || state.released >= state.arrived)
        }
        if go { return }
        let id = state.withLock { state -> UInt64 in state.nextWaiter += 1; return state.nextWaiter }
        let released: Bool = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool? in
                    if state.open || state.released >= number { return true }
                    if honouringCancellation && Task.isCancelled { return false }
                    state.waiters[id] = Waiter(number: number, continuation: continuation)
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            guard honouringCancellation else { return }
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: false)
        }
        if !released { throw CancellationError() }
    }

    /// Lets the next `count` arrivals through (those waiting and those to come).
    public func release(_ count: Int = 1) {
        resume { $0.released += count }
    }

    /// Lets every arrival through, from now on.
    public func open() {
        resume { $0.open = true }
    }

    private func resume(_ change: (inout State) -> Void) {
        let ready = state.withLock { state -> [Waiter] in
            change(&state)
            let ready = state.waiters.filter { state.open || state.released >= $0.value.number }
            ready.keys.forEach { state.waiters.removeValue(forKey: $0) }
            return Array(ready.values)
        }
        ready.forEach { $0.continuation.resume(returning: true) }
    }

    /// Waits until `count` have arrived. Past `timeout` the test fails, naming the gate.
    @discardableResult
    public func waitForArrivals(_ count: Int, timeout: Duration = .seconds(120), sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        if await poll(timeout: timeout, { self.arrivals >= count }) { return true }
        Issue.record("waited \(timeout) for \(count) arrivals at the \(name); \(arrivals) came", sourceLocation: sourceLocation)
        return false
    }

    deinit {
        // Nothing waits for good on a gate the test dropped.
        state.withLock { state in defer { state.waiters = [:] }; return state.waiters.values }.forEach { $0.continuation.resume(returning: true) }
    }
}

/// A gate in a file, for a product that runs in a process of its own: the file-stub
/// backend's `gate:` option and the virtual camera's `--gate`. The Nth capture waits
/// until the file has N lines; ``release(_:)`` appends lines.
public struct FileGate: Sendable {
    /// The gate file.
    public let path: String

    /// An empty gate file in `folder`: the first capture will wait.
    public init(in folder: TemporaryDirectory, name: String = "gate") throws {
        path = folder.file(name)
        try Data().writeTestFile(path)
    }

    /// Releases the next `count` captures.
    public func release(_ count: Int = 1) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(String(repeating: "\n", count: count).utf8))
    }
}
