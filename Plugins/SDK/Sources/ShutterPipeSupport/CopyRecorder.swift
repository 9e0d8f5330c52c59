import ShutterPipeKit
import Synchronization

/// Tells the session's catalogue about the copies a sink made after the answers (a
/// mirror's, an upload's), from any thread, without waiting: a sink keeps one, gives it
/// the catalogue at ``SessionObserver/begin(_:)``, and calls ``record(_:_:)`` once a copy
/// is made and checked. Copies made before that (a queue left by a killed session, going
/// on from the sink's `begin()`) are kept until then; without a catalogue, none is kept.
public final class CopyRecorder: Sendable {
    private enum Catalogue {
        /// Not told yet: the copies made so far.
        case unknown([(String, FileCopy)])
        case known((any ShotCatalogue)?)
    }

    private let catalogue = Mutex<Catalogue>(.unknown([]))
    private let log: Logger
    /// Records under way, so that the end of the session waits for them.
    private let underway = Mutex<[Int: Task<Void, Never>]>([:])
    private let counter = Mutex(0)

    public init(log: Logger) {
        self.log = log
    }

    /// The catalogue to tell (the session's, or `nil` when it keeps none); the copies made
    /// before it go to it now.
    public func use(_ catalogue: (any ShotCatalogue)?) {
        let earlier = self.catalogue.withLock { state -> [(String, FileCopy)] in
            defer { state = .known(catalogue) }
            if case .unknown(let copies) = state { return copies }
            return []
        }
        for (path, copy) in earlier { record(path, copy) }
    }

    /// Records a copy of the stored file at `path`, in the background.
    public func record(_ path: String, _ copy: FileCopy) {
        // Whatever a sink calls its destination, a secret in it never reaches the catalogue.
        var copy = copy
        copy.destination = SecretText.masked(copy.destination)
        copy.location = copy.location.map(SecretText.masked)
        let target = catalogue.withLock { state -> (any ShotCatalogue)? in
            switch state {
            case .unknown(let copies):
                state = .unknown(copies + [(path, copy)])
                return nil
            case .known(let catalogue):
                return catalogue
            }
        }
        guard let target else { return }
        let log = self.log
        let number = counter.withLock { value -> Int in value += 1; return value }
        let task = Task { [self] in
            do { try await target.recordCopy(of: path, copy) } catch {
                log.warning("the catalogue could not record the copy of '\(path)' at \(copy.destination): \(error)")
            }
            underway.withLock { _ = $0.removeValue(forKey: number) }
        }
        // A record that ended before this line leaves a finished task here: flush takes it.
        underway.withLock { $0[number] = task }
    }

    /// Waits for the records under way: call it at the sink's end, before the catalogue's.
    public func flush() async {
        let tasks = underway.withLock { tasks -> [Task<Void, Never>] in defer { tasks = [:] }; return Array(tasks.values) }
        for task in tasks { await task.value }
    }
}
