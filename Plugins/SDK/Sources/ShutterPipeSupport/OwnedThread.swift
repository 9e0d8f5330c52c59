import Foundation

/// A thread of its own for something that blocks: the one way shutterpipe and its plugins
/// start a thread. What blocks (a descriptor's `read`/`poll`/`accept`, libgphoto2,
/// libmicrohttpd, D-Bus, `waitpid`, a sleep to a wall-clock moment) never runs on Swift's
/// cooperative pool, nor on one of Dispatch's shared worker threads.
///
/// Two shapes:
/// - ``start(_:priority:_:)``: a thread that owns a resource runs its loop until the
///   resource closes (an accept loop until its socket is shut down, a reader until end of
///   input), then ends.
/// - ``run(_:_:)``: one blocking call, awaited, then the thread ends.
///
/// For work items one at a time, each with a deadline, on one long-lived thread (a sink's
/// writes, a camera's calls), use ``BlockingQueue``, which runs on one of these.
///
/// It holds no lock while `body` runs.
public final class OwnedThread: Sendable {
    private init() {}

    /// Starts a thread named `name` (as `top -H` and debuggers show it) that runs `body`
    /// once. With `.background`, it runs 10 nice levels below the process.
    @discardableResult
    public static func start(_ name: String, priority: BlockingQueue.Priority = .normal, _ body: @escaping @Sendable () -> Void) -> OwnedThread {
        let owned = OwnedThread()
        let thread = Thread {
            if priority == .background { BlockingQueue.lowerThreadPriority(by: 10) }
            body()
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
}
