import ShutterPipeKit

extension GPhoto2Backend {
    /// The options of the `gphoto2` backend.
    public struct Options: Sendable, Equatable {
        /// Choose the camera by model name (as `shutterpipe cameras` shows it).
        public var model: String?
        /// Choose the camera by port: `usb:001,004`, `ptpip:127.0.0.1:15740:15740`.
        public var port: String?
        /// Choose the camera by serial number.
        public var serial: String?
        /// Settings to apply on enter, by key (`iso`, `shutterspeed`, `aperture`,
        /// `imageformat`, `capturetarget`, or any libgphoto2 setting name).
        public var settings: [String: String] = [:]
        /// Several cameras, each with a name, fired together by one capture. Instead of
        /// the single-camera keys above.
        public var cameras: [CameraSelection] = []
        /// Keep photos on the card after every sink stored them.
        public var keepOnCamera = false
        /// How often to look for shots taken with the camera's own button.
        public var eventPollInterval: Duration = .milliseconds(250)
        /// The longest wait between reconnection attempts.
        public var reconnectBackoffLimit: Duration = .seconds(5)
        /// How long opening a camera may take before its worker is killed and started
        /// again. An enter that gives up sooner (`coordinator.enterTimeout`) leaves the open
        /// running, and the next enter waits for it.
        public var openTimeout: Duration = .seconds(60)
        /// Where each camera's worker keeps libgphoto2's settings (a folder per camera
        /// inside); `nil`: `$XDG_STATE_HOME/shutterpipe/cameras`, else
        /// `~/.local/state/shutterpipe/cameras`.
        public var settingsFolder: String?
        /// Forward libgphoto2's own error messages into the log (debug level), for
        /// diagnosing a camera. Off by default: libgphoto2 then formats a hexdump of every
        /// transfer, which makes downloads 3 to 4 times slower.
        public var libgphoto2Log = false
        /// Confine each camera worker (``WorkerConfinement``). Off only to diagnose a
        /// camera the filter stops (with a warning in the log) and for the benchmark.
        public var confineWorkers = true
        /// The user a worker switches to when the session runs as root; nil:
        /// `shutterpipe-camera`, made when missing; `root`: stays root (confined otherwise).
        public var workerUser: String?
        /// Folders a confined worker may read beyond the system's: where a self-built
        /// libgphoto2 keeps its drivers, or where drivers in its folders are linked to.
        public var workerReadPaths: [String] = []
        /// Sets each camera's clock from the host's at every open (connect and reconnect),
        /// logging how far off it was.
        public var syncClock = false
        /// At every open, the card's files this body never delivered: `new` imports them
        /// (on a body met for the first time, what is on its card stays), `all` imports
        /// them from the first meeting on, `none` leaves them.
        public var importOnConnect = "new"

        /// The defaults.
        public init() {}

        /// The cameras to drive: the `cameras:` list, or one camera from the single keys.
        public var selections: [CameraSelection] {
            let chosen = cameras.isEmpty ? [CameraSelection(name: "camera", model: model, port: port, serial: serial, settings: settings)] : cameras
            return chosen.map { selection in
                var selection = selection
                selection.keepsShotsOnCard = keepOnCamera
                selection.syncsClock = syncClock
                selection.importOnConnect = importOnConnect
                return selection
            }
        }
    }
}

extension GPhoto2Backend.Options {
    /// Reads the options of a `gphoto2` backend.
    public init(_ options: PluginOptions) throws {
        self.init()
        model = try options.string("model")
        port = try Self.port(options)
        serial = try options.string("serial")
        for (key, value, _) in try options.stringMap("settings") { settings[key] = value }
        keepOnCamera = try options.bool("keepOnCamera", default: keepOnCamera)
        eventPollInterval = try options.duration("eventPollInterval", default: eventPollInterval)
        reconnectBackoffLimit = try options.duration("reconnectBackoffLimit", default: reconnectBackoffLimit)
        openTimeout = try options.duration("openTimeout", default: openTimeout)
        settingsFolder = try options.path("settingsFolder")
        libgphoto2Log = try options.bool("libgphoto2Log", default: libgphoto2Log)
        confineWorkers = try options.bool("confineWorkers", default: confineWorkers)
        workerUser = try options.string("workerUser")
        workerReadPaths = try options.stringList("workerReadPaths").map(PluginOptions.expandingTilde)
        if let relative = workerReadPaths.first(where: { !$0.hasPrefix("/") }) {
            throw options.error("'workerReadPaths' takes absolute folders, such as /opt/libgphoto2/lib; got '\(relative)'", key: "workerReadPaths")
        }
        syncClock = try options.bool("syncClock", default: syncClock)
        importOnConnect = try options.choice("importOnConnect", from: ["new", "none", "all"], default: importOnConnect)
        if let user = workerUser, user.isEmpty || user.contains(where: { $0.isWhitespace || $0 == ":" || $0 == "/" }) {
            throw options.error("'workerUser' must be a user name, such as shutterpipe-camera; got '\(user)'", key: "workerUser")
        }
        guard let list = try options.node("cameras") else { return }
        guard model == nil && port == nil && serial == nil && settings.isEmpty else {
            throw options.error("give either 'cameras' (a list) or the single-camera keys 'model', 'port', 'serial' and 'settings', not both", key: "cameras")
        }
        guard case .sequence(let items) = list.value, !items.isEmpty else {
            throw options.error("'cameras' must be a list of cameras, such as '- {name: left, port: usb:001,004}'", key: "cameras")
        }
        for (index, item) in items.enumerated() {
            let entry = try options.nested(item, owner: "\(options.owner) camera \(index + 1)")
            let name = try entry.requiredString("name")
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                throw entry.error("'name' must be letters, digits, - or _ (it goes into file names as {camera}); got '\(name)'", key: "name")
            }
            guard !cameras.contains(where: { $0.name == name }) else { throw entry.error("the camera name '\(name)' is used twice", key: "name") }
            var selection = CameraSelection(name: name, model: try entry.string("model"), port: try Self.port(entry), serial: try entry.string("serial"))
            for (key, value, _) in try entry.stringMap("settings") { selection.settings[key] = value }
            if items.count > 1 && selection.port == nil && selection.serial == nil {
                throw entry.error("camera '\(name)' needs a 'port' or a 'serial': with several cameras, each must say which one it is", key: "name")
            }
            try entry.rejectUnknownKeys()
            cameras.append(selection)
        }
    }

    private static func port(_ options: PluginOptions) throws -> String? {
        guard let port = try options.string("port") else { return nil }
        guard port.hasPrefix("usb:") || port.hasPrefix("ptpip:") || port.hasPrefix("serial:") || port.hasPrefix("ip:") else {
            throw options.error("'port' must look like usb:001,004 or ptpip:127.0.0.1:15740:15740; got '\(port)'", key: "port")
        }
        return port
    }
}
