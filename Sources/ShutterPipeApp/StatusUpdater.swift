import Foundation
import ShutterPipeKit
import ShutterPipeRuntime
import ShutterPipeSupport
import Synchronization

/// Keeps the status line fresh: after every coordinator change, several times a second
/// while a shot is in flight (its seconds and bytes move), and the free space every few
/// seconds.
final class StatusUpdater: Sendable {
    /// How often the shot in flight is redrawn.
    static let progressInterval: Duration = .milliseconds(250)

    private let output: LogOutput
    private let sinks: [NamedSink]
    private let backend: any CaptureBackend
    /// The shots in flight: give it to the coordinator.
    let tracker: ShotTracker
    private let latest = Mutex<(status: CoordinatorStatus, free: Int64?, cameras: [CameraStatus], notes: [String])>((CoordinatorStatus(), nil, [], []))
    private let refreshers = Mutex<[Task<Void, Never>]>([])

    init(output: LogOutput, sinks: [NamedSink], backend: any CaptureBackend) {
        self.output = output
        self.sinks = sinks
        self.backend = backend
        // The tracker is made before self exists; its callback reaches self through this box,
        // filled once self does.
        let redraw = Mutex<(@Sendable () -> Void)?>(nil)
        tracker = ShotTracker { redraw.withLock { $0 }?() }
        redraw.withLock { $0 = { [weak self] in self?.redraw() } }
        let freeSpace = Task { [weak self] in
            while !Task.isCancelled {
                await self?.refreshFreeSpace()
                try? await Task.sleep(for: .seconds(5))
            }
        }
        let progress = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.progressInterval)
                guard let self else { return }
                if !self.tracker.shots.isEmpty { self.redraw() }
            }
        }
        refreshers.withLock { $0 = [freeSpace, progress] }
    }

    func update(_ status: CoordinatorStatus) {
        latest.withLock { $0.status = status }
        redraw()
        Task { await refreshFreeSpace() }
    }

    func stop() {
        refreshers.withLock { $0.forEach { $0.cancel() } }
    }

    /// Held from reading the state to writing the line: redraws come from the tracker's,
    /// the coordinator's and the timer's threads, and one that read the state before
    /// another must not write after it (a shot's "downloading 100 %" drawn over its
    /// "storing").
    private let drawing = Mutex(())

    private func redraw() {
        drawing.withLock { _ in
            let (status, free, cameras, notes) = latest.withLock { ($0.status, $0.free, $0.cameras, $0.notes) }
            output.setStatus(StatusLine.text(status, freeBytes: free, cameras: cameras, inFlight: tracker.shots, notes: notes))
        }
    }

    private func refreshFreeSpace() async {
        var free: Int64?
        var notes: [String] = []
        for sink in sinks {
            if let bytes = await sink.sink.availableCapacity() { free = min(free ?? .max, bytes) }
            if let note = await sink.sink.statusNote() { notes.append(note) }
        }
        let current = latest.withLock { $0.status }
        let cameras = current.inPhotoMode ? await backend.status() : []
        latest.withLock { latest in
            latest.free = free
            latest.cameras = cameras
            latest.notes = notes
        }
        redraw()
    }
}
