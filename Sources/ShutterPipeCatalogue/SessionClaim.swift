#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeSupport

/// What a running session leaves beside its catalogue, `catalogue.sqlite.session`: held
/// under an exclusive `flock` for as long as the session runs (a kill releases it), with
/// the session's process ID and the socket through which marks reach it. `shutterpipe
/// shots rate … --catalogue PATH` finds it there, so a mark on a catalogue a session holds
/// always goes through that session (its pages hear of it, its sidecars and catalogue
/// stay in step), or is refused with the reason when the session has no socket.
public final class SessionClaim: Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// The claim file of the catalogue at `catalogue`.
    public static func path(of catalogue: String) -> String { catalogue + ".session" }

    /// Claims `catalogue` for this process; nil when another session holds it (or the file
    /// cannot be made: marks then go to the catalogue as before).
    public static func claim(_ catalogue: String, socket: String?) -> SessionClaim? {
        let descriptor = open(path(of: catalogue), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            return nil
        }
        var object: [String: Any] = ["pid": Int(getpid())]
        if let socket { object["socket"] = socket }
        let bytes = Array(JSONText.data(object)) + [0x0A]
        guard ftruncate(descriptor, 0) == 0, (try? DescriptorIO.writeAll(bytes, to: descriptor)) != nil else {
            close(descriptor)
            return nil
        }
        return SessionClaim(descriptor: descriptor)
    }

    /// The session that holds `catalogue` now: its process ID and socket (nil when it has
    /// none); nil when no session holds it.
    public static func holder(of catalogue: String) -> (pid: Int, socket: String?)? {
        let descriptor = open(path(of: catalogue), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size < 65_536 else { return nil }
        if flock(descriptor, LOCK_SH | LOCK_NB) == 0 { return nil }  // nobody holds it: a session that ended
        guard errno == EWOULDBLOCK, let data = try? DescriptorIO.readAll(from: descriptor),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any], let pid = object["pid"] as? Int else { return nil }
        return (pid, object["socket"] as? String)
    }
}
