import Foundation
import ShutterPipeKit
import Synchronization

/// Every camera's live view: one ``LiveViewHub`` per camera of the session, each started
/// by its first viewer and stopped when its last one leaves. A backend with several
/// cameras (``CameraLiveViewSource``) gives one per camera; any other ``LiveViewSource``,
/// one, named after the camera.
final class LiveViews: Sendable {
    private struct State {
        var hubs: [LiveViewHub] = []
        var attached = false
        var closed = false
    }

    private let state = Mutex(State())

    /// Takes the session's live view (`nil`: the backend has none).
    func attach(_ source: (any LiveViewSource)?, cameraName: String) {
        var hubs: [LiveViewHub] = []
        if let cameras = source as? any CameraLiveViewSource {
            hubs = cameras.liveViewCameras.map { name in
                LiveViewHub(camera: name, source: .init(frame: { try await cameras.liveViewFrame(camera: name) },
                                                        stop: { await cameras.stopLiveView(camera: name) }))
            }
        } else if let source {
            hubs = [LiveViewHub(camera: cameraName, source: .init(frame: { try await source.liveViewFrame() }, stop: { await source.stopLiveView() }))]
        }
        let old = state.withLock { state -> [LiveViewHub] in
            defer { state.hubs = hubs; state.attached = true }
            return state.hubs
        }
        old.forEach { $0.close() }
    }

    /// Whether the session's backend has live view at all.
    var available: Bool { state.withLock { !$0.hubs.isEmpty } }

    /// Every camera's hub, in the pipeline's order.
    var hubs: [LiveViewHub] { state.withLock { $0.hubs } }

    /// The hub of `camera`; the first camera's for `nil`.
    func hub(_ camera: String?) -> LiveViewHub? {
        let hubs = self.hubs
        guard let camera else { return hubs.first }
        return hubs.first { $0.camera == camera }
    }

    /// Frames handed out so far, every camera's.
    var frames: Int { hubs.reduce(0) { $0 + $1.frames } }

    /// Ends every viewer (the server is stopping).
    func close() {
        let hubs = state.withLock { state -> [LiveViewHub] in
            state.closed = true
            return state.hubs
        }
        hubs.forEach { $0.close() }
    }
}
