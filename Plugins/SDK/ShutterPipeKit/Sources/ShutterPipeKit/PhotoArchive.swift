/// How the sidecar of a photo is named: one type for the sinks that write sidecars and the
/// catalogue that writes marks into them (contract 9.5).
public enum SidecarNaming: String, Sendable, CaseIterable {
    /// `IMG_1.CR2.xmp`: darktable, digiKam (the files sink's default).
    case append
    /// `IMG_1.xmp`: Lightroom, Bridge, Capture One.
    case replace

    /// The sidecar of the photo at `path`.
    public func sidecar(of path: String) -> String {
        switch self {
        case .append:
            return path + ".xmp"
        case .replace:
            // The extension of the last component only, split on the bytes "/" and "." (as
            // Support's PathName): a leading dot (".hidden") or a trailing one is no extension.
            let bytes = Array(path.utf8)
            let start = (bytes.lastIndex(of: UInt8(ascii: "/")) ?? -1) + 1
            guard let dot = bytes[start...].lastIndex(of: UInt8(ascii: ".")), dot > start, dot < bytes.count - 1 else { return path + ".xmp" }
            return String(decoding: bytes[..<dot], as: UTF8.self) + ".xmp"
        }
    }
}

/// Where a sink keeps the photos, as the catalogue indexes them.
public struct ArchiveLayout: Sendable, Equatable {
    /// The folder under which every photo the sink stores lands: the part of its folder
    /// before any placeholder (`./captures` for `./captures/{date}`); `nil` when that is
    /// nothing or `/` (then the catalogue needs its own `path`).
    public var folder: String?
    /// How the sink names the photos' sidecars.
    public var sidecarNaming: SidecarNaming

    public init(folder: String?, sidecarNaming: SidecarNaming) {
        self.folder = folder
        self.sidecarNaming = sidecarNaming
    }
}

/// A sink that keeps photos in folders of its own (ability ``PluginAbility/photoArchive``):
/// the session catalogue is kept beside the first one's folder, indexes the photos of
/// every one, and writes marks into their sidecars as the sink names them. The host asks
/// this of the sink, never its type name or its option keys (contract 9.5).
public protocol PhotoArchive: PhotoSink {
    /// Where the photos go, from the options alone (the folder need not exist yet).
    var archive: ArchiveLayout { get }
}

/// A trigger through which other programs reach a running session (ability
/// ``PluginAbility/sessionEntrance``): `shutterpipe shots rate` hands a mark to the
/// session that holds the catalogue through it, and the session's claim on the catalogue
/// records its address. The host asks this of the trigger, never its type name, its
/// option keys or its wire format (contract 9.5).
public protocol SessionEntrance: TriggerSource {
    /// Where the running session takes requests through this trigger (a socket's path),
    /// from the options alone.
    var sessionAddress: String { get }

    /// Hands `changes` of shot `id` (`camera`'s frame only, when given) to the session
    /// taking requests at `address` (this trigger's, or another session's claim), and
    /// returns what the session did, in a line for the user. Blocks the calling thread
    /// (never call it on the cooperative pool) for at most `timeout`.
    func sendMarks(_ changes: [ShotMarkChange], of id: Int, camera: String?, to address: String, timeout: Duration) throws(SessionEntranceFailure) -> String
}

/// Why a request through a ``SessionEntrance`` did not reach a session, or was refused.
public enum SessionEntranceFailure: Error, Sendable, CustomStringConvertible {
    /// Nobody listens at the address: no session runs there.
    case noSession(String)
    /// A session was reached but refused, or could not be understood, or did not answer
    /// in time: the reason in words.
    case failed(String)

    public var description: String {
        switch self {
        case .noSession(let why), .failed(let why): return why
        }
    }
}
