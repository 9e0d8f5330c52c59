/// The photo being stored while the next capture runs (rule 2): at most one, and it
/// answers its own event when stored.
///
/// The coordinator waits for it (``take()``, then the task's value) in exactly three
/// places, each of which every path goes through: before handling any submission but a
/// capture, before entering photo mode, and before delivering any answer in order. So
/// no branch can forget it, and answers keep their order.
struct PendingStore {
    private var task: Task<Void, Never>?

    /// Hands over the store in flight, leaving none.
    mutating func take() -> Task<Void, Never>? {
        defer { task = nil }
        return task
    }

    /// Records the store that just began. The previous one must have been taken.
    mutating func begin(_ store: Task<Void, Never>) {
        precondition(task == nil, "a store began before the previous one was answered")
        task = store
    }
}
