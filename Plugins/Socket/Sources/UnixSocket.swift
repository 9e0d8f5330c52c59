#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit

/// Blocking Unix-domain stream sockets, for threads of their own.
enum UnixSocket {
    /// Why a socket call failed.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A listening socket at `path` with mode 0600. A stale socket file (nobody listening)
    /// is replaced; a live one is an error.
    static func listen(at path: String) throws(Failure) -> Int32 {
        guard path.utf8.count < 108 else { throw Failure(description: "socket path '\(path)' is longer than 107 bytes") }
        if FileManager.default.fileExists(atPath: path) {
            if let probe = try? connect(to: path) {
                close(probe)
                throw Failure(description: "another program already listens on '\(path)'")
            }
            unlink(path)
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = Self.address(path)
        let previous = umask(0o177)  // the socket file is created 0600
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        umask(previous)
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw Failure(description: "cannot create socket '\(path)': \(reason)")
        }
        chmod(path, 0o600)
        guard Glibc.listen(descriptor, 64) == 0 else {
            close(descriptor)
            throw Failure(description: "listen on '\(path)': \(String(cString: strerror(errno)))")
        }
        return descriptor
    }

    /// A connection to the socket at `path`.
    static func connect(to path: String) throws(Failure) -> Int32 {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = Self.address(path)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw Failure(description: reason)
        }
        return descriptor
    }

    private static func address(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// Reads lines from `descriptor` until it closes; lines over `limit` bytes are cut.
    static func readLines(_ descriptor: Int32, limit: Int = 64 * 1024, _ line: (Data) -> Void) {
        var pending = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            pending.append(contentsOf: buffer[0..<count])
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                line(pending.subdata(in: pending.startIndex..<newline))
                pending.removeSubrange(pending.startIndex...newline)
            }
            if pending.count > limit {
                line(pending.prefix(limit))
                pending.removeAll()
            }
        }
        if !pending.isEmpty { line(pending) }
    }
}

/// The socket's wire format: one JSON object per line each way.
public enum SocketProtocol {
    /// The default socket path: `$XDG_RUNTIME_DIR/shutterpipe.sock`, else
    /// `/tmp/shutterpipe-UID.sock`.
    public static var defaultPath: String {
        if let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return "\(runtime)/shutterpipe.sock"
        }
        return "/tmp/shutterpipe-\(getuid()).sock"
    }

    /// A request line: `{"event":"capture"}`, with an optional `"id"` echoed back.
    public static func request(_ event: String, id: String? = nil) -> Data {
        var object: [String: Any] = ["event": event]
        if let id { object["id"] = id }
        return line(object)
    }

    /// The reply to one request.
    public static func reply(_ answer: ShutterAnswer, id: Any?) -> Data {
        var object: [String: Any] = ["event": answer.request.event.rawValue, "state": answer.state.rawValue,
                                     "summary": answer.summary, "ms": Int(answer.duration.milliseconds.rounded())]
        if let id { object["id"] = id }
        if let failure = answer.failure {
            object["cause"] = failure.cause.rawValue
            object["message"] = failure.description
        }
        if !answer.stored.isEmpty { object["files"] = answer.stored.map(\.location) }
        if let shot = answer.shotNumber { object["shot"] = shot }
        if !answer.warnings.isEmpty { object["warnings"] = answer.warnings }
        return line(object)
    }

    /// An error reply to a line that was not a request; the session carries on.
    public static func error(_ message: String, id: Any? = nil) -> Data {
        var object: [String: Any] = ["error": message]
        if let id { object["id"] = id }
        return line(object)
    }

    /// Whether a reply's state counts as success for the event it answers.
    public static func isSuccess(_ reply: [String: Any]) -> Bool {
        guard reply["error"] == nil, let state = reply["state"] as? String else { return false }
        switch reply["event"] as? String {
        case "capture": return state == ShutterState.photoSuccess.rawValue
        case "enter": return state == ShutterState.enteredPhotoMode.rawValue
        case "exit": return state == ShutterState.exitedOrUnableToEnter.rawValue && reply["cause"] == nil
        default: return reply["cause"] == nil
        }
    }

    private static func line(_ object: [String: Any]) -> Data {
        var data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        data.append(UInt8(ascii: "\n"))
        return data
    }
}
