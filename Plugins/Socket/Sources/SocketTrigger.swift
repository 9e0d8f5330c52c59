#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// A trigger on a Unix socket: programs, scripts and Stream Deck buttons send
/// `{"event":"capture"}` lines and get back the state that answered each, as JSON; and
/// `{"set":{"iso":"400"}}` or `{"get":[]}` lines to change or read camera settings
/// between shots.
///
/// The socket is created with mode 0600 (only this user). Each client has a thread that
/// reads its lines and one that writes its replies (``SocketConnection``); a malformed
/// line gets an error reply and the session carries on. A client that leaves its replies
/// unread is disconnected, never waited for. The trigger runs until the pipeline stops,
/// and removes its socket file then.
///
/// A session that keeps a catalogue also takes `{"mark":12,"rating":4}` lines: marks for a
/// shot, written to its sidecars and the catalogue (``ShotCatalogue``), as
/// `shutterpipe shots rate` sends them. A trigger adopts ``SessionObserver`` for that.
public final class SocketTrigger: TriggerSource, SessionObserver {
    /// The type name in configs.
    public static let typeName = "socket"

    /// The options of the `socket` trigger.
    public struct Options: Sendable, Equatable {
        /// The socket's path.
        public var path: String = SocketProtocol.defaultPath
        /// Request names to events; by default `enter`, `capture`, `exit`.
        public var map = EventMap(["enter": .enter, "capture": .capture, "exit": .exit])
        /// The most clients connected at once.
        public var maximumClients = 32

        /// The defaults.
        public init() {}
    }

    /// Registers the `socket` type.
    public static func register(in registry: PluginRegistry) throws {
        try registry.registerTrigger(typeName, summary: "JSON lines on a Unix socket (0600); each request gets the answering state back", abilities: [.sessionObserver, .sessionEntrance]) { options, environment in
            SocketTrigger(options: try Options(options), log: environment.log)
        }
        try registry.registerCommand(TriggerCommand.self)
        try registry.registerCommand(LabelCommand.self)
        try registry.registerCommand(SetCommand.self)
        try registry.registerCommand(GetCommand.self)
    }

    private struct Client {
        let connection: SocketConnection
        /// How many of its requests still owe an answer (each answer comes back on its
        /// request's own handle or callback, with the client's `id`).
        var owed = 0
    }

    let options: Options
    private let log: Logger
    private let catalogue = Mutex<(any ShotCatalogue)?>(nil)
    private let clients = Mutex<(byID: [UInt32: Client], nextID: UInt32, stopping: Bool)>(([:], 1, false))

    /// Creates a trigger.
    public init(options: Options, log: Logger = .discarding) {
        self.options = options
        self.log = log
    }

    /// Listens until cancelled.
    public func run(delivering events: EventChannel) async throws {
        let listener: Int32
        let folder = PathName.parent(options.path)
        if folder == SocketProtocol.fallbackFolder { try SocketProtocol.preparePrivateFolder(folder) }
        do { listener = try UnixSocket.listen(at: options.path) } catch {
            if error.code == EPERM {
                throw ShutterError(.permissionDenied, "socket trigger: \(error.operation); it is not replaced",
                                   fix: "choose another 'path', or have its owner (or root) remove it")
            }
            throw ShutterError(.permissionDenied, "socket trigger: \(error.code == EADDRINUSE || error.code == ENAMETOOLONG ? error.operation : error.description)",
                               fix: "choose another 'path', or stop the other shutterpipe using it")
        }
        ExitCleanup.register(options.path)
        log.info("listening on \(options.path)")
        OwnedThread.start("shutterpipe socket accept") { [self] in self.accept(listener, events) }
        await withTaskCancellationHandler {
            // Wait until the pipeline stops.
            for await _ in AsyncStream<Void>(unfolding: { try? await Task.sleep(for: .seconds(3600)); return Task.isCancelled ? nil : () }) {}
        } onCancel: {
            shutdown(listener, Int32(SHUT_RDWR))  // wakes the acceptor, which closes it
        }
        unlink(options.path)
        ExitCleanup.unregister(options.path)
        await answerWhatIsPending()
        let open = clients.withLock { state in state.byID.values.map(\.connection) }
        for connection in open { connection.hangUp() }
    }

    /// At shutdown: new requests are refused, and a client still connected gets the
    /// answer to every event it sent before (the coordinator still handles what is
    /// queued). Bounded by ``drainLimit``, in case an answer never comes.
    private func answerWhatIsPending() async {
        let waiting = clients.withLock { state -> Int in
            state.stopping = true
            return state.byID.values.reduce(0) { $0 + $1.owed }
        }
        if waiting > 0 {
            log.info("stopping: answering the \(waiting) request(s) socket clients sent before")
            let deadline = ContinuousClock.now + Self.drainLimit
            while ContinuousClock.now < deadline, clients.withLock({ state in state.byID.values.contains { $0.owed > 0 } }) {
                await pauseIgnoringCancellation(for: .milliseconds(10))  // the stop's drain: cancelled or not
            }
        }
        // What was queued is written before the connections close: an answer synced just
        // before the stop, still in its connection's queue, included.
        let open = clients.withLock { state in state.byID.values.map(\.connection) }
        for connection in open { connection.finishWriting() }
        let flushed = ContinuousClock.now + .seconds(2)
        while ContinuousClock.now < flushed, open.contains(where: { $0.isWriting }) { await pauseIgnoringCancellation(for: .milliseconds(10)) }
    }

    /// The longest a stopping trigger waits for the answers its clients are owed.
    static let drainLimit: Duration = .seconds(120)

    /// Queues the reply to one of client `clientID`'s requests, if it is still connected;
    /// never waits for the client to read it.
    /// `settling`: the reply that ends a request (a sequence's frames are replies that
    /// do not).
    private func answer(client clientID: UInt32, with reply: SocketReply, settling: Bool = true) {
        // Queued while the answer still counts as owed, so a stopping trigger that sees
        // nothing owed knows every answer is queued.
        let refused = clients.withLock { state -> SocketConnection? in
            guard var client = state.byID[clientID] else { return nil }
            if settling { client.owed -= 1 }
            state.byID[clientID] = client
            return client.connection.send(SocketProtocol.line(reply)) ? nil : client.connection
        }
        if let refused { disconnect(refused, client: clientID) }  // the client left or reads nothing
    }

    /// Queues `line` for a client; one that leaves too many replies unread is disconnected.
    private func reply(_ line: Data, to connection: SocketConnection, client: UInt32) {
        if !connection.send(line) { disconnect(connection, client: client) }
    }

    private func disconnect(_ connection: SocketConnection, client: UInt32) {
        log.warning("socket client \(client) left \(SocketConnection.limit) replies unread; disconnected it (a client must read the reply to each request)")
        connection.hangUp()
    }

    private func accept(_ listener: Int32, _ events: EventChannel) {
        while true {
            let descriptor = Glibc.accept(listener, nil, nil)
            if descriptor < 0 {
                if errno == EINTR { continue }
                // Shut down at stop. Closed here, by the only thread that uses it: closed
                // under a blocked accept, its number could be reused and accepted on.
                close(listener)
                return
            }
            let admitted = clients.withLock { state -> (UInt32, SocketConnection)? in
                guard state.byID.count < options.maximumClients else { return nil }
                let id = state.nextID
                state.nextID &+= 1
                let connection = SocketConnection(descriptor: descriptor)
                state.byID[id] = Client(connection: connection)
                return (id, connection)
            }
            guard let (id, connection) = admitted else {
                // A short line into a fresh socket's empty buffer: it cannot block.
                _ = SocketProtocol.line(SocketReply(error: "too many clients (\(options.maximumClients)); try again later")).withUnsafeBytes {
                    Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                }
                close(descriptor)
                continue
            }
            OwnedThread.start("shutterpipe socket client") { [self] in self.serve(id, connection, events) }
        }
    }

    private func serve(_ id: UInt32, _ connection: SocketConnection, _ events: EventChannel) {
        LineReader.forEachLine(in: connection.descriptor) { line in
            guard !line.allSatisfy({ $0 == 0x20 || (0x09...0x0D).contains($0) }) else { return true }
            switch SocketRequest.parse(line) {
            case .rejected(let rejection):
                reply(SocketProtocol.line(rejection), to: connection, client: id)
            case .event(let name, let requestID):
                let event = options.map.event(for: name) ?? .unknown
                guard admit(client: id, connection: connection) else { return true }
                events.submit(TriggerEvent(event, origin: "client \(id): \(name.prefix(40))")).observe { [self] answer in
                    self.answer(client: id, with: SocketReply(answer, id: requestID))
                }
            case .settings(let action, let camera, let requestID):
                guard admit(client: id, connection: connection) else { return true }
                events.send(SettingsRequest(action, camera: camera, origin: "client \(id)")) { [self] answer in
                    self.answer(client: id, with: SocketReply(answer, id: requestID))
                }
            case .sequence(let name, let requestID):
                guard admit(client: id, connection: connection) else { return true }
                // Each frame is replied to as a capture, then the whole sequence.
                let request = SequenceRequest(name, origin: "client \(id)") { [self] frame in
                    self.answer(client: id, with: SocketReply(frame, id: requestID), settling: false)
                }
                events.send(request) { [self] answer in
                    self.answer(client: id, with: SocketReply(answer, id: requestID))
                }
            case .label(let text, let requestID):
                guard admit(client: id, connection: connection) else { return true }
                events.send(LabelRequest(text, origin: "client \(id)")) { [self] answer in
                    self.answer(client: id, with: SocketReply(answer, id: requestID))
                }
            case .mark(let shot, let camera, let changes, let requestID):
                guard let catalogue = catalogue.withLock({ $0 }) else {
                    reply(SocketProtocol.line(SocketReply(markFailed: ShutterError(
                        .invalidConfiguration, "this session keeps no catalogue", fix: "remove 'catalogue: off' from its config, or mark offline with shutterpipe shots --catalogue PATH"),
                                                          id: requestID)), to: connection, client: id)
                    return true
                }
                guard admit(client: id, connection: connection) else { return true }
                // The catalogue works on a thread of its own; the reply is queued when it is done.
                Task { [self] in
                    let started = ContinuousClock.now
                    do {
                        let marked = try await camera == nil ? catalogue.mark(shot, changes) : catalogue.mark(shot, camera: camera, changes)
                        let ms = Int((ContinuousClock.now - started).milliseconds.rounded())
                        self.answer(client: id, with: SocketReply(marked: marked, camera: camera, id: requestID, ms: ms))
                    } catch {
                        self.answer(client: id, with: SocketReply(markFailed: ShutterError.wrapping(error), id: requestID))
                    }
                }
            }
            return true
        }
        clients.withLock { $0.byID[id] = nil }
        connection.finishWriting()  // the descriptor closes when the last user lets go
    }

    /// Keeps the session's catalogue, for mark requests.
    public func begin(_ session: SessionView) async {
        catalogue.withLock { $0 = session.catalogue }
    }

    /// Nothing to do with answers: each client gets its own on its request's handle.
    public func observe(_ answer: ShutterAnswer, trigger: String) async {}

    /// Counts a request as owed an answer; a stopping trigger refuses it instead (and says
    /// so to the client).
    private func admit(client id: UInt32, connection: SocketConnection) -> Bool {
        let taken = clients.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.byID[id]?.owed += 1
            return true
        }
        if !taken {
            reply(SocketProtocol.line(SocketReply(error: "the session is stopping; the request was not taken")), to: connection, client: id)
        }
        return taken
    }
}

extension SocketTrigger.Options {
    /// Reads the options of a `socket` trigger.
    public init(_ options: PluginOptions) throws {
        self.init()
        path = try options.path("path", default: path)
        map = try EventMap(options, defaults: map.events, known: ["enter", "capture", "exit", "(any request name)"])
        maximumClients = try options.int("maximumClients", default: maximumClients, in: 1...1024)
    }
}
