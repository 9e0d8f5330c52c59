#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeImaging
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
            WebTrigger(options: try WebOptions(options), log: environment.log, name: environment.instanceName, session: environment.session)
        }
    }

    let options: WebOptions
    let log: Logger
    /// Its name in the pipeline: how the answers to its own requests are recorded.
    let name: String
    /// The session's name (the config's `session`): the viewer token's scope.
    let session: String
    /// The shares the operator made (``ShareGrants``).
    let shares = ShareGrants()
    /// The shots in flight, told to the pages.
    let progress = ProgressFeed()
    let library: PhotoLibrary
    let hub = EventHub()
    let liveViews = LiveViews()
    private let cameras = Mutex<(@Sendable () async -> [CameraStatus])?>(nil)
    /// The sequences the session's config plans, by name.
    let sequences = Mutex<[String]>([])
    private let sessionCatalogue = Mutex<(any ShotCatalogue)?>(nil)
    let previews: PreviewMaker
    let fullImages: FullImageCache
    let channel = Mutex<EventChannel?>(nil)
    private let listening = Mutex<UInt16?>(nil)
    private let said = Mutex<Set<String>>([])

    /// Creates a trigger; nothing listens until ``run(delivering:)``.
    public init(options: WebOptions, log: Logger = .discarding, name: String = WebTrigger.typeName, session: String = "session") {
        self.options = options
        self.log = log
        self.name = name
        self.session = session
        library = PhotoLibrary(keeping: options.recent)
        let budget = DecodeBudget(maxPixels: options.maxMegapixels * 1_000_000, memoryLimit: options.fullImageCacheMB << 20, settings: .webTrigger)
        previews = PreviewMaker(longEdge: options.previewSize, budget: budget, log: log)
        fullImages = FullImageCache(limit: options.fullImageCacheMB << 20, budget: budget, log: log)
    }

    /// Logs `message` as a warning the first time it comes (a photo refused on every
    /// request for it is said once, however often a page asks).
    func warnOnce(_ message: String) {
        let first = said.withLock { said in
            if said.count > 1000 { said.removeAll() }
            return said.insert(message).inserted
        }
        if first { log.warning(message) }
    }

    /// What `request` may see and do (``WebAccess``); `nil` when it carries no token
    /// where one is needed.
    func access(_ request: HTTPRequest) -> WebAccess? {
        guard options.token != nil else { return .operatorAccess }
        return WebRole.token(of: request).flatMap(access(token:))
    }

    /// What `token` grants: the operator's, the viewer's, or a share's.
    func access(token given: String) -> WebAccess? {
        guard let token = options.token else { return .operatorAccess }
        if WebRole.same(given, token) { return .operatorAccess }
        if let viewer = options.viewerToken, WebRole.same(given, viewer) {
            return WebAccess(role: .viewer, scope: options.viewerScope == "catalogue" ? .all : .session(session), originals: options.viewerOriginals)
        }
        return shares.access(of: given)
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
        } onCancel: { [progress] in
            progress.stop()
            hub.close()
            liveViews.close()
        }
        // The answer to a request that fired the last shot still goes out; stopping
        // waits for libmicrohttpd's threads, so on a thread of its own.
        await OwnedThread.run("shutterpipe web stop") { server.stop() }
    }

    /// The session starts: its live view, its cameras' status and its catalogue are what
    /// the page shows. Previews are kept on disk beside the catalogue.
    public func begin(_ session: SessionView) async {
        liveViews.attach(session.liveView, cameraName: "camera")
        cameras.withLock { $0 = session.cameras }
        sequences.withLock { $0 = session.sequences }
        sessionCatalogue.withLock { $0 = session.catalogue }
        progress.start(session, hub: hub, name: self.session)
        // Every page hears of each shot once it has its catalogue id, and of every change of
        // marks, whoever made it (a page, the socket, `shutterpipe shots rate`).
        session.catalogue?.observe { [hub] change in
            switch change {
            case .recorded(let shot): hub.publish("shot") { access in access.admits(shot) ? CatalogueRoutes.json(shot, for: access) : nil }
            case .marked(let shot): hub.publish("marked") { access in access.admits(shot) ? CatalogueRoutes.json(shot, for: access) : nil }
            case .copied(let shot): hub.publish("copied") { access in access.admits(shot) && !access.isViewer ? CatalogueRoutes.json(shot, for: access) : nil }
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
        waitForAsyncWork(timeout: timeout, work)
    }

    /// Every answer of the session: the library and the page's event stream hear it.
    public func observe(_ answer: ShutterAnswer, trigger: String) async {
        publish(answer, trigger: trigger)
    }

    /// A photo's bytes before the sinks store them: while a page listens, its JPEG's preview
    /// is made from them at once and shown in the shot's place before the file lands.
    /// When the backend says it sends the preview itself (``CapturedFile/previewFollows``),
    /// that one is waited for, and the bytes decoded here only if none comes within
    /// ``backendPreviewWait``.
    public func captured(_ photo: CapturedPhoto, shot: Int) async {
        guard hub.count > 0, let jpeg = photo.files.first(where: { PhotoFormat($0.name) == .jpeg }) else { return }
        previews.prepareEarly(jpeg.data, shot: shot, waitingFirst: jpeg.previewFollows ? Self.backendPreviewWait : .zero) { [progress] preview in
            progress.sharpPreview(preview, of: shot)
        }
    }

    /// How long a backend's promised preview is waited for before the photo is decoded
    /// here: the camera worker's comes 100-250 ms after the last byte on two busy cores.
    static let backendPreviewWait: Duration = .seconds(1)

    /// A picture the backend showed of a shot before its files were whole. One of a
    /// preview's size (the camera worker's, decoded as the bytes came; not a camera's
    /// thumbnail) is the shot's preview from now on: the page's request for the stored
    /// photo's preview gets it at once, though it came after the answer, instead of
    /// waiting for a decode of the photo.
    /// Only while a page listens, as for the bytes (``captured(_:shot:)``): otherwise nobody
    /// may ever ask for it, and keeping it would cost a write to the preview cache a shot.
    public func previewed(_ preview: EarlyPreview, shot: Int) async {
        guard hub.count > 0 else { return }
        previews.offerSharp(preview.jpeg, shot: shot)
    }

    /// Records an answer in the library and tells the pages, once (the request that waits
    /// for it may have done so first); returns its photo's id.
    @discardableResult
    private func publish(_ answer: ShutterAnswer, trigger: String) -> Int? {
        let (entry, first) = library.record(answer, trigger: trigger)
        guard first else { return entry?.id }
        let session = self.session
        hub.publish("answer") { access in access.admitsLive(session: session) ? WebJSON.answer(answer, trigger: trigger, photo: entry?.id, for: access) : nil }
        if let entry { hub.publish("photo") { access in access.admitsLive(session: session) ? WebJSON.photo(entry, for: access) : nil } }
        // After the events, which it would delay; only while a page listens: nobody may
        // ever ask for it otherwise.
        if let photo = entry.flatMap({ PreviewMaker.previewSource($0.paths) }) {
            // The preview made from the shot's bytes is this file's, if it was made.
            let adopted = answer.shot.map { previews.adoptEarly(shot: $0.number, as: photo) } ?? false
            if hub.count > 0 && !adopted { previews.prepare(photo) }
        }
        return entry?.id
    }

    /// Sends `event` to the coordinator and waits for its answer, on the calling thread
    /// (a connection's own), at most `timeout`. The answer is in the library (and the
    /// pages told) before the reply, which names its photo's id.
    func fire(_ event: ShutterEvent, from client: String, timeout: Duration = .seconds(120)) -> (answer: ShutterAnswer, photo: Int?)? {
        waitForAnswer(timeout) { [self] events, reply in
            events.submit(TriggerEvent(event, origin: "web \(client)")).observe { answer in
                reply((answer, self.publish(answer, trigger: self.name)))
            }
        }
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

    /// Starts the sequence `name` (it takes its turn among the events) and returns at
    /// once: a sequence may run for hours. Its frames reach the pages as every answer
    /// does; its own answer goes out as a `sequence` event. False when no session takes it.
    func startSequence(_ name: String, from client: String) -> Bool {
        guard let events = channel.withLock({ $0 }) else { return false }
        let session = self.session
        log.info("web: sequence '\(LogText.escaped(name))' asked by \(client)")
        events.send(SequenceRequest(name, origin: "web \(client)")) { [hub] answer in
            hub.publish("sequence") { access in
                access.admitsLive(session: session) ? ["name": answer.request.name, "summary": answer.summary,
                                                       "cause": answer.failure?.cause.rawValue ?? NSNull()] : nil
            }
        }
        return true
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
        guard arrived.wait(timeout: timeout.fromNow) == .success else { return nil }
        return answer.withLock { $0 }
    }
}
