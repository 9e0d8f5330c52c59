import Foundation

/// One file of an exposure, as the camera delivered it.
public struct CapturedFile: Sendable, Equatable {
    /// The camera's own file name ("IMG_0042.CR2", "capt0000.jpg"). Never trusted as a
    /// storage name by itself: cameras reuse names.
    public var name: String
    /// The bytes, exactly as downloaded.
    public var data: Data
    /// The camera that made this file, by its name in the config, when a backend drives
    /// several (`{camera}` in file names then tells their files apart); `nil` for one.
    public var camera: String?
    /// Where the file is on the camera that made it, as the backend names it
    /// ("/store_00010001/DCIM/100D750/DSC_0042.NEF"), so that the backend can find it
    /// again in ``CaptureBackend/finish(_:stored:)`` (to delete it from the card); `nil`
    /// when the file stays nowhere. (Added in ABI 6; it replaces the photo's
    /// `backendReference` string.)
    public var cameraPath: String?
    /// The serial number of the camera body that made it, where the backend knows it
    /// (`{serial}` in file names). (Added in ABI 8.)
    public var cameraSerial: String?
    /// Whether the backend is decoding this file's screen preview as its bytes came and
    /// shows it shortly (``SessionObserver/previewed(_:shot:)``, a preview's size): a
    /// display need not decode the file too, on the same cores, at the same moment. It
    /// still must, if none comes. (Added in contract 10.3.)
    public var previewFollows = false

    /// Creates a file.
    public init(name: String, data: Data, camera: String? = nil, cameraPath: String? = nil, cameraSerial: String? = nil) {
        self.name = name
        self.data = data
        self.camera = camera
        self.cameraPath = cameraPath
        self.cameraSerial = cameraSerial
    }

    /// The camera name's stem: "IMG_0042" for "IMG_0042.CR2".
    public var stem: String {
        let base = Self.lastComponent(name)
        guard let dot = base.lastIndex(of: UInt8(ascii: ".")), dot != base.startIndex else { return String(decoding: base, as: UTF8.self) }
        return String(decoding: base[..<dot], as: UTF8.self)
    }

    /// The camera name's extension in lower case, without the dot ("cr2"); "bin" when
    /// the name has none.
    public var fileExtension: String {
        let base = Self.lastComponent(name)
        guard let dot = base.lastIndex(of: UInt8(ascii: ".")), dot != base.startIndex, dot + 1 != base.endIndex else { return "bin" }
        return String(decoding: base[(dot + 1)...], as: UTF8.self).lowercased()
    }

    /// The name's last component, split on the byte `/` (a `/` followed by a combining
    /// mark is one character to `String`, and would not split).
    static func lastComponent(_ name: String) -> ArraySlice<UInt8> {
        let bytes = Array(name.utf8)
        let start = bytes.lastIndex(of: UInt8(ascii: "/")).map { $0 + 1 } ?? 0
        return bytes[start...]
    }
}

/// One exposure: every file the camera produced for it (RAW+JPEG gives two).
public struct CapturedPhoto: Sendable, Equatable {
    /// The shot's identity. The backend leaves it `nil`; the coordinator sets it before
    /// any sink sees the photo (the id it gave when it asked the camera to fire, or a new
    /// one for a shot taken with the camera's own button). (Added in ABI 6.)
    public var id: ShotID?
    /// The files of this exposure, in the order the camera delivered them.
    public var files: [CapturedFile]
    /// The camera that took it, for people and templates ("Nikon D750", "file-stub").
    public var camera: String
    /// When the exposure was taken.
    public var captureTime: Date
    /// Set when only part of the exposure came (a rig where one camera of several failed):
    /// the files hold what did come, the sinks store them, and the capture is answered
    /// ``ShutterState/photoFailed`` with this failure, which names what is missing.
    public var missing: ShutterError?
    /// How a photo that no trigger asked for came, for the log and the catalogue: `nil`
    /// for a capture or the camera's own button; `card import` for one taken while the
    /// camera was away (the gphoto2 backend's card catch-up), `hot folder`, or a plugin's
    /// own word. (Added in ABI 8.)
    public var origin: String?

    /// Creates a photo.
    public init(files: [CapturedFile], camera: String, captureTime: Date = Date(), missing: ShutterError? = nil) {
        self.files = files
        self.camera = camera
        self.captureTime = captureTime
        self.missing = missing
    }
}

/// Where a photo came from and where it belongs, as a sink receives it.
public struct ShotContext: Sendable, Equatable {
    /// The session name from the config.
    public var session: String
    /// The shot's identity (its ``ShotID/number`` counts this run's shots from 1). Sinks
    /// that number files persistently keep their own sequence. (Added in ABI 6.)
    public var shot: ShotID
    /// When the exposure was taken.
    public var captureTime: Date
    /// The camera that took it.
    public var camera: String
    /// The trigger that asked for it, or "camera" for a shot taken with the camera's own
    /// shutter button.
    public var trigger: String
    /// What the sinks listed before this one stored (sinks run in config order): a hook or
    /// a manifest after a `files` sink knows where the photo went.
    public var storedSoFar: [StoredFile]
    /// The session label the shot was taken under: an order number, a subject's barcode,
    /// set from a scanner, the socket, MQTT or the page (`{label}` in file names); `nil`
    /// when none is set. (Added in ABI 8.)
    public var label: String?
    /// The frame's place when a sequence took it (`{frame}` and `{sequence}` in file
    /// names); `nil` for a single shot. (Added in contract 9.4.)
    public var sequence: SequenceFrame?

    /// Creates a context.
    public init(session: String, shot: ShotID, captureTime: Date, camera: String, trigger: String, storedSoFar: [StoredFile] = [],
                label: String? = nil) {
        self.label = label
        self.session = session
        self.shot = shot
        self.captureTime = captureTime
        self.camera = camera
        self.trigger = trigger
        self.storedSoFar = storedSoFar
    }

    /// The shot's number in this run, from 1 (``shot``'s number).
    public var shotNumber: Int { shot.number }
}
