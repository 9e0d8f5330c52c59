import ShutterPipeKit
import Synchronization

/// The shots in flight, for status displays: what each is doing now ("capturing 2.1 s",
/// "downloading 45 % of 24 MB", "storing") and since when.
///
/// The coordinator moves each shot through its phases; the backend's download reports
/// (``BackendContext/report(_:)``) arrive from any thread and go to the shot being
/// captured. In a burst two shots are in flight: one storing while the next is captured.
/// Reading it never waits for the coordinator.
public final class ShotTracker: Sendable {
    /// One shot in flight.
    public struct Shot: Sendable, Equatable {
        /// What the shot is doing.
        public enum Phase: Sendable, Equatable {
            /// The camera is exposing (or the backend has not reported bytes yet).
            case capturing
            /// Its files are coming from the camera.
            case downloading
            /// The sinks are storing it.
            case storing
        }

        /// The shot number in this session.
        public var number: Int
        /// What it is doing now.
        public var phase: Phase
        /// When the capture began (for a shot the camera took itself, when storing began).
        public var began: ContinuousClock.Instant
        /// When the current phase began.
        public var phaseBegan: ContinuousClock.Instant
        /// The downloads reported so far, by camera and file.
        var downloads: [String: DownloadProgress] = [:]
        /// The latest picture the backend showed before the files were whole.
        public var preview: EarlyPreview?

        /// Creates a shot, with the downloads reported so far.
        public init(number: Int, phase: Phase, began: ContinuousClock.Instant, phaseBegan: ContinuousClock.Instant,
                    downloads: [DownloadProgress] = []) {
            self.number = number
            self.phase = phase
            self.began = began
            self.phaseBegan = phaseBegan
            for download in downloads { self.downloads[Self.key(download)] = download }
        }

        static func key(_ download: DownloadProgress) -> String { "\(download.camera ?? "")/\(download.file)" }

        /// Bytes downloaded so far, across its files.
        public var bytes: Int64 { downloads.values.reduce(0) { $0 + $1.bytes } }
        /// The announced size of the files reported so far; `nil` when one is unknown.
        public var total: Int64? {
            downloads.values.reduce(Int64(0) as Int64?) { sum, download in download.total.flatMap { total in sum.map { $0 + total } } }
        }
        /// How many files have reported.
        public var files: Int { downloads.count }
    }

    private let state = Mutex<[Int: Shot]>([:])
    /// The files of the last shots that ended (camera and file → shot number): a preview
    /// decoded as the bytes came may follow the shot's answer by a few milliseconds.
    private let ended = Mutex<[(key: String, number: Int)]>([])
    /// How many ended shots' files are remembered.
    static let endedKept = 16
    private let observers = Mutex<[@Sendable () -> Void]>([])

    /// Creates a tracker; `changed` hears every change of phase and every early preview
    /// (not every byte).
    public init(changed: @escaping @Sendable () -> Void = {}) {
        observers.withLock { $0.append(changed) }
    }

    /// Adds a function that hears what `changed` hears, from now on.
    public func observe(_ observer: @escaping @Sendable () -> Void) {
        observers.withLock { $0.append(observer) }
    }

    private func changed() {
        for observer in observers.withLock({ $0 }) { observer() }
    }

    /// An early preview from the backend: it belongs to the shot in flight whose download
    /// reported its file; else to the ended shot that downloaded it, if it was one of the
    /// last (a preview decoded during the download may come once the shot was answered);
    /// else to the shot being captured (a backend that reports no download). One larger
    /// than ``EarlyPreview/largest`` is dropped. Returns the number of the shot it belongs to.
    @discardableResult
    func show(_ preview: EarlyPreview) -> Int? {
        guard preview.jpeg.count <= EarlyPreview.largest else { return nil }
        let key = "\(preview.camera ?? "")/\(preview.file)"
        let late = ended.withLock { ended in ended.last { $0.key == key }?.number }
        let taken = state.withLock { shots -> Int? in
            let owner = shots.values.filter { $0.downloads[key] != nil }.max { $0.number < $1.number }
                ?? (late == nil ? shots.values.filter({ $0.phase != .storing }).min(by: { $0.number < $1.number }) : nil)
            guard let number = owner?.number else { return nil }
            shots[number]?.preview = preview
            return number
        }
        if let taken {
            changed()
            return taken
        }
        return late
    }

    /// The shots in flight, oldest first.
    public var shots: [Shot] {
        state.withLock { $0.values.sorted { $0.number < $1.number } }
    }

    func capturing(_ number: Int) {
        let now = ContinuousClock.now
        state.withLock { $0[number] = Shot(number: number, phase: .capturing, began: now, phaseBegan: now) }
        changed()
    }

    /// A download report from the backend: it belongs to the shot being captured; one
    /// that comes when none is (late, from a capture that gave up) is dropped.
    func report(_ progress: DownloadProgress) {
        let entered = state.withLock { shots -> Bool in
            guard let number = shots.values.first(where: { $0.phase != .storing })?.number else { return false }
            let first = shots[number]?.phase == .capturing
            if first {
                shots[number]?.phase = .downloading
                shots[number]?.phaseBegan = .now
            }
            shots[number]?.downloads[Shot.key(progress)] = progress
            return first
        }
        if entered { changed() }
    }

    func storing(_ number: Int) {
        let now = ContinuousClock.now
        state.withLock { shots in
            var shot = shots[number] ?? Shot(number: number, phase: .storing, began: now, phaseBegan: now)
            shot.phase = .storing
            shot.phaseBegan = now
            shots[number] = shot
        }
        changed()
    }

    func ended(_ number: Int) {
        let shot = state.withLock { $0.removeValue(forKey: number) }
        if let shot, !shot.downloads.isEmpty {
            ended.withLock { ended in
                ended += shot.downloads.keys.sorted().map { (key: $0, number: number) }
                if ended.count > Self.endedKept { ended.removeFirst(ended.count - Self.endedKept) }
            }
        }
        changed()
    }
}
