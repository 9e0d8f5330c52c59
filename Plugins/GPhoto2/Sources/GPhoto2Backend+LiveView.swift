#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// Live view: each camera's stream of frames, from its worker, for framing and focusing.
extension GPhoto2Backend {
    /// The next live-view frame of the (first) camera.
    public func liveViewFrame() async throws -> Data {
        try await liveViewFrame(camera: workers[0].name)
    }

    /// The cameras live view can be asked of.
    public var liveViewCameras: [String] { workers.map(\.name) }

    /// The next live-view frame of `camera`: a request its worker runs between captures,
    /// which go first. Each camera has its own worker, so one camera's stream never waits
    /// for another's capture.
    public func liveViewFrame(camera: String) async throws -> Data {
        guard let worker = workers.first(where: { $0.name == camera }) else {
            throw ShutterError(.invalidConfiguration, "no camera named '\(camera)' in this session; its cameras: \(liveViewCameras.joined(separator: ", "))",
                               fix: "ask for one of the session's cameras")
        }
        guard state.withLock({ $0.inPhotoMode }) else {
            throw ShutterError(.notInPhotoMode, "live view needs photo mode", fix: "send enter (the page's Enter button)")
        }
        if let reason = state.withLock({ $0.noLiveView[camera] }) { throw LiveViewUnavailable(reason) }
        let (reply, descriptors, _) = try await worker.reply(to: worker.send(.preview))
        defer { descriptors.forEach { _ = close($0) } }
        switch reply {
        case .frame: return Data(try SharedBytes.map(descriptors[0]))
        case .noLiveView(let why):
            let reason = (isRig ? "camera '\(camera)': " : "") + why
            if state.withLock({ state in defer { state.noLiveView[camera] = reason }; return state.noLiveView[camera] == nil }) {
                log.warning("live view: \(reason); not asked again this session", [("camera", camera)])
            }
            throw LiveViewUnavailable(reason)
        case .failed(let failure): throw failure.error
        default: throw ShutterError(.cameraFailure, "unexpected answer to a live-view frame: \(reply)")
        }
    }

    /// Nobody watches `camera` any more: nothing to do (the camera's stream ends with its
    /// last frame request).
    public func stopLiveView(camera: String) async {}
}
