import Dispatch

/// A serial queue for blocking work (file I/O with fsync, C library calls), so that it
/// never occupies a thread of Swift's cooperative pool.
///
/// Work items run one at a time in submission order, which also serialises access to
/// whatever the work touches (libgphoto2 is not thread-safe, for instance).
public final class BlockingQueue: Sendable {
    private let queue: DispatchQueue

    /// Creates a queue; `label` names its thread in debuggers.
    public init(label: String) {
        queue = DispatchQueue(label: label, qos: .userInitiated)
    }

    /// Runs `work` on the queue and returns its result. Cancellation of the calling task
    /// does not interrupt `work`; put deadlines inside it where the C API allows.
    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try work() })
            }
        }
    }

    /// Runs `work`, which cannot fail, on the queue.
    public func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work()) }
        }
    }
}
