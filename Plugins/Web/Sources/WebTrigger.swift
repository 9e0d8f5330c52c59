#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// A trigger served over HTTP: a page with the last shot, a strip of recent ones, a
/// shutter button, and JSON routes for scripts. It sees every answer of the session,
/// whichever trigger fired it (``SessionObserver``), and tells the page at once through
/// server-sent events.
///
/// The server is libmicrohttpd with a thread per connection (never the cooperative pool),
/// bounded connections, an idle timeout and a body limit. Off loopback, every request
/// needs the token.
public final class WebTrigger: TriggerSource, SessionObserver {
    /// The type name in configs.
    public static let typeName = "web"

    /// Registers the `web` type.
    public static func register(in registry: PluginRegistry) throws {
        try registry.registerTrigger(typeName, summary: "a web page and JSON routes: the last shot large, recent shots, a shutter button, live updates",
                                     abilities: [.sessionObserver]) { options, environment in
            WebTrigger(options: try WebOptions(options), log: environment.log)
        }
    }

    let options: WebOptions
    let log: Logger
    let library: PhotoLibrary
    let hub = EventHub()
    let liveViews = LiveViews()
    private let cameras = Mutex<(@Sendable () async -> [CameraStatus])?>(nil)
    private let sessionCatalogue = Mutex<(any ShotCatalogue)?>(nil)
    let previews: PreviewMaker
    let fullImages: FullImageCache
    private let waiting = Mutex<(next: UInt64, byToken: [UInt64: AnswerWaiter])>((1, [:]))
    let channel = Mutex<EventChannel?>(nil)
    private let listening = Mutex<UInt16?>(nil)

    /// Creates a trigger; nothing listens until ``run(delivering:)``.
    public init(options: WebOptions, log: Logger = .discarding) {
        self.options = options
        self.log = log
        library = PhotoLibrary(keeping: options.recent)
        previews = PreviewMaker(longEdge: options.previewSize, log: log)
        fullImages = FullImageCache(limit: options.fullImageCacheMB << 20, log: log)
    }

    /// The port it listens on, once it does.
    public var port: UInt16? { listening.withLock { $0 } }

    /// Serves until cancelled.
    public func run(delivering events: EventChannel) async throws {
        channel.withLock { $0 = events }
        let routes = WebRoutes(trigger: self)
        let server = try HTTPServer(host: options.host, port: options.port) { request in routes.answer(request) }
        listening.withLock { $0 = server.port }
        let shown = options.host.contains(":") ? "[\(options.host)]" : options.host
        log.info("web page at http://\(shown):\(server.port)/\(options.token == nil ? "" : "?token=…")")
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                hub.onClose { continuation.resume() }
            }
        } onCancel: {
            hub.close()
            liveViews.close()
        }
        server.stop()
        // Requests still waiting for an answer get none: the session is ending.
        let left = waiting.withLock { state -> [AnswerWaiter] in defer { state.byToken = [:] }; return Array(state.byToken.values) }
        left.forEach { $0.resolve(nil) }
    }

    /// The answer to an event this trigger sent (a POST route). The request that waits for
    /// it gets it once ``observe(_:trigger:)`` has put it in the library, which the
    /// coordinator calls next: the reply then names its photo's id.
    public func sync(_ answer: ShutterAnswer) async {
        waiting.withLock { $0.byToken[answer.request.token] }?.hold(answer)
    }

    /// The session starts: its live view, its cameras' status and its catalogue are what
    /// the page shows. Previews are kept on disk beside the catalogue.
    public func begin(_ session: SessionView) async {
        liveViews.attach(session.liveView, cameraName: "camera")
        cameras.withLock { $0 = session.cameras }
        sessionCatalogue.withLock { $0 = session.catalogue }
        // Every page hears of each shot once it has its catalogue id, and of every change of
        // marks, whoever made it (a page, the socket, `shutterpipe shots rate`).
        session.catalogue?.observe { [hub] change in
            switch change {
            case .recorded(let shot): hub.publish("shot", CatalogueRoutes.json(shot))
            case .marked(let shot): hub.publish("marked", CatalogueRoutes.json(shot))
            case .copied(let shot): hub.publish("copied", CatalogueRoutes.json(shot))
            @unknown default: break  // a change a newer contract reports: pages do not know it
            }
        }
        if options.previewCacheMB > 0, let folder = session.catalogue?.cacheFolder {
            previews.keep(on: PreviewDiskCache(folder: "\(folder)/web/previews", limit: Int64(options.previewCacheMB) << 20, log: log))
        }
    }

    /// The session's catalogue, once it started with one.
    var catalogue: (any ShotCatalogue)? { sessionCatalogue.withLock { $0 } }

    /// Each camera's status, as the backend reports it (empty before the session starts).
    /// Blocks the calling thread (a connection's own) for at most two seconds.
    func cameraStatus() -> [CameraStatus] {
        guard let read = cameras.withLock({ $0 }) else { return [] }
        guard case .success(let cameras) = Self.blocking(timeout: .seconds(2), { await read() }) else { return [] }
        return cameras
    }

    /// Runs `work` and waits for it on the calling thread (a connection's own, never the
    /// cooperative pool), at most `timeout`: a timeout or a throw is a failure.
    static func blocking<T: Sendable>(timeout: Duration = .seconds(10), _ work: @escaping @Sendable () async throws -> T) -> Result<T, ShutterError> {
        let result = Mutex<Result<T, ShutterError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let outcome: Result<T, ShutterError>
            do { outcome = .success(try await work()) } catch { outcome = .failure(ShutterError.wrapping(error)) }
            result.withLock { $0 = outcome }
            done.signal()
        }
        let nanoseconds = Int(timeout.components.seconds) * 1_000_000_000 + Int(timeout.components.attoseconds / 1_000_000_000)
        _ = done.wait(timeout: .now() + .nanoseconds(nanoseconds))
        return result.withLock { $0 } ?? .failure(ShutterError(.timeout, "no answer within \(formatDuration(timeout))", fix: "try again; see the log"))
    }

    /// Every answer of the session: the library and the page's event stream hear it.
    public func observe(_ answer: ShutterAnswer, trigger: String) async {
        let entry = library.record(answer, trigger: trigger)
        hub.publish("answer", WebJSON.answer(answer, trigger: trigger, photo: entry?.id))
        if let entry { hub.publish("photo", WebJSON.photo(entry)) }
        // After the events, which it would delay; only while a page listens: nobody may
        // ever ask for it otherwise.
        if hub.count > 0, let photo = entry.flatMap({ PreviewMaker.previewSource($0.paths) }) { previews.prepare(photo) }
        let waiter = waiting.withLock { state -> AnswerWaiter? in
            guard let waiter = state.byToken[answer.request.token], waiter.holds(answer) else { return nil }
            return state.byToken.removeValue(forKey: answer.request.token)
        }
        waiter?.resolve((answer, entry?.id))
    }

    /// Sends `event` to the coordinator and waits for its answer, on the calling thread
    /// (a connection's own), at most `timeout`.
    func fire(_ event: ShutterEvent, from client: String, timeout: Duration = .seconds(120)) -> (answer: ShutterAnswer, photo: Int?)? {
        guard let events = channel.withLock({ $0 }) else { return nil }
        let waiter = AnswerWaiter()
        let token = waiting.withLock { state -> UInt64 in
            let token = state.next
            state.next += 1
            state.byToken[token] = waiter
            return token
        }
        events.send(event, origin: "web \(client)", token: token)
        let answer = waiter.wait(timeout: timeout)
        if answer == nil { _ = waiting.withLock { $0.byToken.removeValue(forKey: token) } }
        return answer
    }
}

extension WebTrigger {
    /// Sets the session label through the coordinator (it takes its turn between shots)
    /// and waits for the answer, on the calling thread (a connection's own), at most
    /// `timeout`; `nil` without an answer.
    func label(_ request: LabelRequest, timeout: Duration = .seconds(30)) -> LabelAnswer? {
        waitForAnswer(timeout) { events, answer in events.send(request, answer: answer) }
    }

    /// Sends a settings request to the coordinator (it takes its turn between shots) and
    /// waits for the answer, on the calling thread (a connection's own), at most `timeout`.
    func settings(_ request: SettingsRequest, timeout: Duration = .seconds(60)) -> SettingsAnswer? {
        waitForAnswer(timeout) { events, answer in events.send(request, answer: answer) }
    }

    /// Asks through the session's channel and waits for the one answer.
    private func waitForAnswer<Answer: Sendable>(_ timeout: Duration,
                                                 _ ask: (EventChannel, @escaping @Sendable (Answer) -> Void) -> Void) -> Answer? {
        guard let events = channel.withLock({ $0 }) else { return nil }
        let answer = Mutex<Answer?>(nil)
        let arrived = DispatchSemaphore(value: 0)
        ask(events) { value in
            answer.withLock { $0 = value }
            arrived.signal()
        }
        let nanoseconds = Int(timeout.components.seconds) * 1_000_000_000 + Int(timeout.components.attoseconds / 1_000_000_000)
        guard arrived.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success else { return nil }
        return answer.withLock { $0 }
    }
}

/// One request waiting for its answer, and then for the library to record it.
final class AnswerWaiter: Sendable {
    private let answer = Mutex<(held: ShutterAnswer?, value: (answer: ShutterAnswer, photo: Int?)?, done: Bool)>((nil, nil, false))
    private let arrived = DispatchSemaphore(value: 0)

    /// The trigger's answer, synced before the session's observers hear it.
    func hold(_ value: ShutterAnswer) {
        answer.withLock { $0.held = value }
    }

    func holds(_ value: ShutterAnswer) -> Bool {
        answer.withLock { $0.held == value }
    }

    func resolve(_ value: (answer: ShutterAnswer, photo: Int?)?) {
        let first = answer.withLock { state -> Bool in
            guard !state.done else { return false }
            state.value = value
            state.done = true
            return true
        }
        if first { arrived.signal() }
    }

    func wait(timeout: Duration) -> (answer: ShutterAnswer, photo: Int?)? {
        let nanoseconds = Int(timeout.components.seconds) * 1_000_000_000 + Int(timeout.components.attoseconds / 1_000_000_000)
        guard arrived.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success else { return nil }
        return answer.withLock { $0.value }
    }
}
