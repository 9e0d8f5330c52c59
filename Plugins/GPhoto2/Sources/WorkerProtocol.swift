import Foundation
import ShutterPipeImaging
import ShutterPipeKit
import ShutterPipeSupport

/// The protocol between the gphoto2 backend and its camera workers: one JSON message per
/// `SOCK_SEQPACKET` packet, over a socket pair the backend gives the worker as descriptor
/// 3. Photo bytes never travel in a message: each file is an in-memory file (`memfd`) the
/// worker's libgphoto2 downloads into, attached to the reply (`SCM_RIGHTS`) and mapped by
/// the backend, so the boundary copies nothing.
///
/// The host asks (``WorkerRequest``, with an id); the worker answers each request once
/// (``WorkerMessage/reply(id:_:)``) and tells of things nobody asked for
/// (``WorkerMessage/event(_:)``: shots taken with the camera's button, a lost and a
/// recovered connection, libgphoto2's log).
public enum WorkerProtocol {
    /// The descriptor the worker finds its end of the socket pair on.
    public static let socketDescriptor: Int32 = 3

    /// Set to 1 in a worker's environment, libgphoto2's own error messages are sent to
    /// the backend's log. Off by default: while any log function is registered,
    /// libgphoto2 formats a hexdump of every transfer whatever its level, which made
    /// downloads 3 to 4 times slower (measured: 10 MB in 45 ms without, 150–190 ms with).
    public static let libraryLogVariable = "SHUTTERPIPE_LIBGPHOTO2_LOG"

    /// `CLOCK_MONOTONIC` now, in nanoseconds: the clock of every time in the protocol,
    /// comparable across the processes of a rig (and with `shutterpipe-fakecam
    /// --capture-log`).
    public static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }()

    /// Sends one message (with the descriptors of its files, in order).
    public static func send<Message: Encodable>(_ message: Message, over channel: MessageChannel, descriptors: [Int32] = []) throws(SystemError) {
        let data: Data
        do { data = try encoder.encode(message) } catch { throw SystemError("encode a worker message: \(error)", code: EINVAL) }
        try channel.send(data, descriptors: descriptors)
    }

    /// Decodes one message.
    public static func decode<Message: Decodable>(_ type: Message.Type, from data: Data) throws(SystemError) -> Message {
        do { return try JSONDecoder().decode(type, from: data) } catch {
            throw SystemError("a malformed worker message: \(String(decoding: data.prefix(200), as: UTF8.self))", code: EBADMSG)
        }
    }
}

/// Which camera a worker opens, and how: a `cameras:` entry, or the single-camera keys.
public struct CameraSelection: Codable, Sendable, Equatable {
    /// The camera's name in the pipeline (`{camera}` in file names).
    public var name: String
    /// By model name, as `shutterpipe cameras` shows it.
    public var model: String?
    /// By port: `usb:001,004`, `ptpip:127.0.0.1:15740:15740`.
    public var port: String?
    /// By serial number.
    public var serial: String?
    /// Settings to apply on open, by key: the config's. On an enter they are all or none
    /// (a value the camera does not take fails the enter); on a reopen (a reconnection, a
    /// restarted worker) each is applied on its own, and one the camera refuses is
    /// reported and left out, never a reason to stay closed.
    public var settings: [String: String]
    /// The values changed during the session, as asked for, applied after ``settings``
    /// each on its own (one the camera refuses now is reported and dropped).
    public var replay: [SettingChange] = []
    /// `keepOnCamera`: no stored shot is deleted, so the worker never waits for a delete.
    public var keepsShotsOnCard = false
    /// `syncClock`: the camera's clock is set from the host's at every open.
    public var syncsClock = false
    /// `importOnConnect`: `new`, `none` or `all`.
    public var importOnConnect = "new"
    /// Card files the session holds and has not stored yet (a worker started again after
    /// a crash): never imported by a catch-up.
    public var awaitingStore: [CardPath] = []

    public init(name: String, model: String? = nil, port: String? = nil, serial: String? = nil, settings: [String: String] = [:]) {
        self.name = name
        self.model = model
        self.port = port
        self.serial = serial
        self.settings = settings
    }
}

/// The camera a worker has open.
public struct CameraIdentity: Codable, Sendable, Equatable {
    public var model: String
    public var port: String
    public var serial: String?

    public init(model: String, port: String, serial: String?) {
        self.model = model
        self.port = port
        self.serial = serial
    }
}

/// A file on the camera's card.
public struct CardPath: Codable, Sendable, Equatable, Hashable, CustomStringConvertible {
    public var folder: String
    public var name: String

    public init(folder: String, name: String) {
        self.folder = folder
        self.name = name
    }

    /// Reads `folder/name` back (``CapturedFile/cameraPath``); `nil` without a slash.
    public init?(_ path: String) {
        guard let slash = path.lastIndex(of: "/") else { return nil }
        self.init(folder: String(path[..<slash]), name: String(path[path.index(after: slash)...]))
    }

    /// `folder/name`, as ``CapturedFile/cameraPath`` carries it.
    public var description: String { "\(folder)/\(name)" }
}

/// A failure in the worker, as the answer's cause and message.
public struct WorkerFailure: Codable, Sendable, Equatable {
    public var cause: FailureCause
    public var message: String
    public var fix: String?

    public init(_ error: ShutterError) {
        cause = error.cause
        message = error.message
        fix = error.fix
    }

    /// The failure as the coordinator answers it.
    public var error: ShutterError { ShutterError(cause, message, fix: fix) }
}

/// What `shutterpipe cameras` shows for one camera.
public struct CameraReport: Codable, Sendable, Equatable {
    /// The model libgphoto2 names.
    public var model: String
    /// The port it is on.
    public var port: String
    /// The serial number, battery and free card space, where the camera reports them.
    public var serial: String?
    public var battery: String?
    public var freeCardBytes: Int64?
    /// Why the camera could not be opened, if it could not.
    public var problem: String?

    public init(model: String, port: String) {
        self.model = model
        self.port = port
    }
}

/// What the backend asks a worker.
public enum WorkerRequest: Codable, Sendable, Equatable {
    /// Open the camera (closing one already open). With `keepTrying`, a failure starts the
    /// worker's own reconnection instead of being the answer's end: after a restart.
    case open(CameraSelection, pollMilliseconds: Int, reconnectLimitMilliseconds: Int, keepTrying: Bool)
    /// Take one exposure and download every file of it; with a moment (wall clock, Unix
    /// ns), the camera thread sleeps until then and fires (a rig's `at`).
    case capture(atUnixNanoseconds: UInt64?)
    /// Take one exposure held open this long (bulb), and download every file of it.
    case bulb(milliseconds: Int)
    /// Delete these files from the card (the photo is archived).
    case delete([CardPath])
    /// These files' shot is stored durably: a catch-up never imports them.
    case delivered([CardPath])
    /// Battery and free card space.
    case status
    /// One live-view frame (`gp_camera_capture_preview`).
    case preview
    /// Close the camera; the worker then waits for the next request.
    case close
    /// List the cameras libgphoto2 detects, and those at these ports, each opened briefly.
    case list(ports: [String])
    /// Skip request `id` if it has not started (its caller gave up waiting); answered
    /// at once, not in turn.
    case abandon(UInt64)
    /// The settings named (every one when empty), with their values and choices.
    case readSettings([String])
    /// Change settings, all or none; answered with each as read back, or refused. The
    /// worker keeps the changes and applies them again whenever it reopens the camera.
    case applySettings([SettingChange])
}

extension WorkerRequest {
    /// Whether a capture that comes while this request still waits its turn runs first:
    /// the last shot's delete and a status read can wait a shot; an open, a close or a
    /// listing cannot (the capture needs what they do).
    public var yieldsToCapture: Bool {
        switch self {
        case .delete, .delivered, .status, .preview: true
        case .open, .capture, .bulb, .close, .list, .abandon, .readSettings, .applySettings: false
        }
    }

    /// Whether it fires the camera: it goes before the jobs that yield to a capture.
    public var isCapture: Bool {
        switch self {
        case .capture, .bulb: true
        default: false
        }
    }
}

/// A request with its id: the reply carries the id back.
public struct WorkerEnvelope: Codable, Sendable {
    public var id: UInt64
    public var request: WorkerRequest

    public init(id: UInt64, request: WorkerRequest) {
        self.id = id
        self.request = request
    }
}

/// A file of an exposure in a reply or event; its bytes are the descriptor at the same
/// position among the message's descriptors.
public struct WorkerFile: Codable, Sendable, Equatable {
    public var path: CardPath
    public var size: Int
    /// The file's time on the card (libgphoto2's mtime, the camera's clock), for imports.
    public var modified: Int?
    /// Whether the worker decodes its screen preview as it came (``StreamPreview``) and
    /// sends it after the download: the host need not decode it too.
    public var previewFollows: Bool?

    public init(path: CardPath, size: Int, modified: Int? = nil, previewFollows: Bool? = nil) {
        self.path = path
        self.size = size
        self.modified = modified
        self.previewFollows = previewFollows
    }
}

/// The worker's answer to one request.
public enum WorkerReply: Codable, Sendable, Equatable {
    case opened(CameraIdentity)
    /// Every file of the exposure. `firedAt` is when the worker began the capture, in
    /// `CLOCK_MONOTONIC` nanoseconds; `took` how long capture and download took there.
    case captured([WorkerFile], firedAt: UInt64, tookNanoseconds: UInt64)
    case done
    /// A live-view frame, a JPEG of `size` bytes: the message's descriptor.
    case frame(size: Int)
    /// The camera has no live view (libgphoto2 says its driver cannot): why.
    case noLiveView(String)
    case status(battery: String?, freeCardBytes: Int64?, connected: Bool)
    case cameras([CameraReport], problem: String?)
    /// Settings read, or changed and read back.
    case settings([CameraSetting])
    /// A settings change refused before anything changed, with the settings it named.
    case refused(WorkerFailure, [CameraSetting])
    case failed(WorkerFailure)
}

/// What a worker tells the backend on its own.
public enum WorkerEvent: Codable, Sendable, Equatable {
    /// A shot taken with the camera's own button, downloaded.
    case cameraShot([WorkerFile])
    /// Files found on the card at a (re)connection that this body never delivered (taken
    /// while the camera was away): one exposure's (its RAW and JPEG), with their memfds.
    case importedShot([WorkerFile])
    /// The connection to the camera was lost; the worker reconnects by itself.
    case lost(String)
    /// The camera is back.
    case recovered(CameraIdentity, outageMilliseconds: Double)
    /// Values kept for replay that the camera refused on a reopen, by widget name: no
    /// longer applied (the log says why).
    case settingsDropped([String])
    /// A line of libgphoto2's log, or of the worker's own.
    case log(level: String, message: String)
    /// How far the download of a file of the capture in flight has come (a few times a
    /// second, and once at its end).
    case progress(file: String, bytes: Int64, total: Int64?)
    /// The thumbnail at the front of a file being downloaded (``ExifThumbnail``), in the
    /// in-memory file attached: a JPEG for display only, sent before the file is whole.
    case thumbnail(file: String)
    /// The file's sharp preview, decoded while it downloaded (a JPEG of about 1600 px,
    /// upright), in the in-memory file attached; sent shortly after the download.
    case preview(file: String)
}

/// One message from a worker.
public enum WorkerMessage: Codable, Sendable, Equatable {
    /// The worker began request `id`: from now on it is in libgphoto2's hands.
    case started(id: UInt64)
    case reply(id: UInt64, WorkerReply)
    case event(WorkerEvent)
}
