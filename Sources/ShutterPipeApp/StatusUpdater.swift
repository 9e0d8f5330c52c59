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
    private let latest = Mutex<(status: CoordinatorStatus, free: Int64?, camera: CameraStatus?)>((CoordinatorStatus(), nil, nil))
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
        let (free, camera) = latest.withLock { latest -> (Int64?, CameraStatus?) in
            latest.status = status
            return (latest.free, latest.camera)
        }
        output.setStatus(StatusLine.text(status, freeBytes: free, camera: camera))
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
        let camera = current.inPhotoMode ? await backend.status() : nil
        let status = latest.withLock { latest -> CoordinatorStatus in
            latest.free = free
            latest.camera = camera
            return latest.status
        }
        output.setStatus(StatusLine.text(status, freeBytes: free, camera: camera))
    }
}
