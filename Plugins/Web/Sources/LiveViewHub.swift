import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// Live view of one camera for every viewer of its stream (`/live/{camera}.mjpg`) from one
/// stream of the camera: while anyone watches, one loop asks the backend for frames (at
/// most 30 a second) and hands each to every viewer; a viewer that falls behind gets the
/// newest frame, never a queue. When the last viewer leaves, the loop ends and the camera
/// is told (``LiveViewSource/stopLiveView()``).
final class LiveViewHub: Sendable {
    /// One camera's frames, as the backend gives them.
    struct Source: Sendable {
        var frame: @Sendable () async throws -> Data
        var stop: @Sendable () async -> Void
    }

    /// The camera's name in the pipeline.
    let camera: String
    static let boundary = "shutterpipe-frame"
    static let fastest: Duration = .milliseconds(33)

    private struct State {
        var source: Source?
        var viewers: [ObjectIdentifier: Viewer] = [:]
        var producing = false
        var frames = 0
        var closed = false
        /// Why the camera cannot give live view at all, once it said so.
        var unavailable: String?
    }

    private let state = Mutex(State())

    init(camera: String, source: Source) {
        self.camera = camera
        state.withLock { $0.source = source }
    }

    /// How many watch now.
    var viewerCount: Int { state.withLock { $0.viewers.count } }

    /// Frames handed out so far.
    var frames: Int { state.withLock { $0.frames } }

    /// Why live view cannot be had (the camera has none), once known.
    var unavailable: String? { state.withLock { $0.unavailable } }

    /// How long a first viewer waits for the camera to say whether it has live view.
    static let probePatience: Duration = .seconds(5)

    /// Before the first viewer is answered: whether the camera has live view at all. Until
    /// a frame has come, one is asked for here (on the server's thread, never the pool's),
    /// so that a camera without it is refused with the reason rather than sent an empty
    /// stream. Returns the reason it cannot, or `nil`.
    func unavailableAfterProbe() -> String? {
        let (source, probe) = state.withLock { state -> (Source?, Bool) in
            (state.source, state.unavailable == nil && state.frames == 0 && !state.producing)
        }
        if probe, let source {
            _ = waitForAsyncWork(timeout: Self.probePatience) {
                do { _ = try await source.frame() } catch let error as LiveViewUnavailable { self.record(error) }
            }
        }
        return unavailable
    }

    private func record(_ error: LiveViewUnavailable) {
        let viewers = state.withLock { state -> [Viewer] in
            state.unavailable = error.reason
            defer { state.viewers = [:] }
            return Array(state.viewers.values)
        }
        viewers.forEach { $0.end() }
    }

    /// A new viewer; the loop starts if it was the first.
    func watch() -> Viewer {
        let viewer = Viewer { [weak self] gone in self?.leave(gone) }
        let (start, source) = state.withLock { state -> (Bool, Source?) in
            guard !state.closed else { return (false, nil) }
            state.viewers[ObjectIdentifier(viewer)] = viewer
            defer { state.producing = true }
            return (!state.producing, state.source)
        }
        if start, let source { Task { await self.produce(from: source) } }
        return viewer
    }

    /// Ends every viewer (the server is stopping).
    func close() {
        let viewers = state.withLock { state -> [Viewer] in
            state.closed = true
            defer { state.viewers = [:] }
            return Array(state.viewers.values)
        }
        viewers.forEach { $0.end() }
    }

    private func leave(_ viewer: Viewer) {
        _ = state.withLock { $0.viewers.removeValue(forKey: ObjectIdentifier(viewer)) }
    }

    private func produce(from source: Source) async {
        while true {
            // Cancelled, every sleep below returns at once: the loop would spin.
            let cancelled = Task.isCancelled
            let viewers = state.withLock { state -> [Viewer] in
                if state.viewers.isEmpty || cancelled { state.producing = false; return [] }
                return Array(state.viewers.values)
            }
            guard !viewers.isEmpty else { break }
            let started = ContinuousClock.now
            do {
                let frame = try await source.frame()
                state.withLock { $0.frames += 1 }
                let part = Data("--\(Self.boundary)\r\nContent-Type: image/jpeg\r\nContent-Length: \(frame.count)\r\n\r\n".utf8) + frame + Data("\r\n".utf8)
                viewers.forEach { $0.offer(part) }
            } catch let error as LiveViewUnavailable {
                record(error)  // no live view at all: the viewers are ended, nobody asks again
                state.withLock { $0.producing = false }
                break
            } catch {
                try? await Task.sleep(for: .milliseconds(250))  // the camera is busy or away: try again
            }
            let spent = ContinuousClock.now - started
            if spent < Self.fastest { try? await Task.sleep(for: Self.fastest - spent) }
        }
        await source.stop()
    }

    /// One viewer's stream: the newest frame waits, older ones are dropped.
    final class Viewer: HTTPStream, Sendable {
        private let frames = ValueChannel<Data>(capacity: 1, overflow: .dropOldest)
        /// What is left of the frame being sent: its connection's thread's alone.
        private let pending = Mutex(Data())
        private let onClosed: @Sendable (Viewer) -> Void

        init(onClosed: @escaping @Sendable (Viewer) -> Void) {
            self.onClosed = onClosed
        }

        func offer(_ part: Data) {
            frames.send(part)
        }

        /// Ends the stream once the frame that waits (if any) is sent.
        func end() {
            frames.finish()
        }

        func closed() {
            end()
            onClosed(self)
        }

        func next(maximum: Int) -> Data? {
            var part = pending.withLock { $0 }
            while part.isEmpty {
                switch frames.receive(until: .now + .seconds(1)) {
                case .value(let frame): part = frame
                case .closed: return nil
                case .timedOut: continue
                }
            }
            let chunk = part.prefix(maximum)
            pending.withLock { $0 = Data(part.dropFirst(chunk.count)) }
            return Data(chunk)
        }
    }
}
