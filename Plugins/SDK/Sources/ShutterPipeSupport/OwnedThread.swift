import Foundation
import Synchronization

/// A thread of its own for something that blocks: the one way shutterpipe and its plugins
/// start a thread. What blocks (a descriptor's `read`/`poll`/`accept`, libgphoto2,
/// libmicrohttpd, D-Bus, `waitpid`, a sleep to a wall-clock moment) never runs on Swift's
/// cooperative pool, nor on one of Dispatch's shared worker threads.
///
/// Two shapes:
/// - ``start(_:priority:_:)``: a thread that owns a resource runs its loop until the
///   resource closes (an accept loop until its socket is shut down, a reader until end of
///   input), then ends. ``finished(within:)`` waits for that end under a deadline.
/// - ``run(_:_:)``: one blocking call, awaited, then the thread ends.
///
/// For work items one at a time, each with a deadline, on one long-lived thread (a sink's
/// writes, a camera's calls), use ``BlockingQueue``, which runs on one of these.
///
/// It holds no lock while `body` runs.
public final class OwnedThread: Sendable {
    private let ended = Mutex<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    private init() {}

    /// Starts a thread named `name` (as `top -H` and debuggers show it) that runs `body`
    /// once. With `.background`, it runs 10 nice levels below the process.
    @discardableResult
    public static func start(_ name: String, priority: BlockingQueue.Priority = .normal, _ body: @escaping @Sendable () -> Void) -> OwnedThread {
        let owned = OwnedThread()
        let thread = Thread {
            if priority == .background { BlockingQueue.lowerThreadPriority(by: 10) }
            body()
            owned.end()
        }
        thread.name = name
        thread.start()
        return owned
    }

    /// Runs `body` on a thread of its own and returns its result: one blocking call,
    /// awaited without holding a thread of the pool.
    public static func run<T: Sendable>(_ name: String, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            start(name) { continuation.resume(returning: body()) }
        }
    }

    /// Whether the body has returned.
    public var isFinished: Bool { ended.withLock { $0.done } }

    /// Waits until the body has returned, at most `deadline`; false when it had not.
    public func finished(within deadline: Duration) async -> Bool {
        if isFinished { return true }
        let waited = Task {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = ended.withLock { state -> Bool in
                    if !state.done { state.waiters.append(continuation) }
                    return state.done
                }
                if done { continuation.resume() }
            }
        }
        _ = try? await withDeadline(deadline, "the thread to end") { await waited.value }
        return isFinished
    }

    private func end() {
        let waiters = ended.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.done = true
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters.forEach { $0.resume() }
    }
}
