import Foundation
import ShutterPipeKit
import ShutterPipeRuntime
import ShutterPipeSupport
import Synchronization

/// Keeps the status line fresh: after every coordinator change, and the free space
/// every few seconds.
final class StatusUpdater: Sendable {
    private let output: LogOutput
    private let sinks: [NamedSink]
    private let backend: any CaptureBackend
    private let latest = Mutex<(status: CoordinatorStatus, free: Int64?, cameras: [CameraStatus])>((CoordinatorStatus(), nil, []))
    private let refresher = Mutex<Task<Void, Never>?>(nil)

    init(output: LogOutput, sinks: [NamedSink], backend: any CaptureBackend) {
        self.output = output
        self.sinks = sinks
        self.backend = backend
        let task = Task { [weak self] in
            while !Task.isCancelled {
                await self?.refreshFreeSpace()
                try? await Task.sleep(for: .seconds(5))
            }
        }
        refresher.withLock { $0 = task }
    }

    func update(_ status: CoordinatorStatus) {
        let (free, cameras) = latest.withLock { latest -> (Int64?, [CameraStatus]) in
            latest.status = status
            return (latest.free, latest.cameras)
        }
        output.setStatus(StatusLine.text(status, freeBytes: free, cameras: cameras))
        Task { await refreshFreeSpace() }
    }

    func stop() {
        refresher.withLock { $0?.cancel() }
    }

    private func refreshFreeSpace() async {
        var free: Int64?
        for sink in sinks {
            if let bytes = await sink.sink.availableCapacity() { free = min(free ?? .max, bytes) }
        }
        let current = latest.withLock { $0.status }
        let cameras = current.inPhotoMode ? await backend.status() : []
        let status = latest.withLock { latest -> CoordinatorStatus in
            latest.free = free
            latest.cameras = cameras
            return latest.status
        }
        output.setStatus(StatusLine.text(status, freeBytes: free, cameras: cameras))
    }
}
