import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// The socket is how other programs reach the running session (``SessionEntrance``):
/// `shutterpipe shots rate` hands marks to the session that holds the catalogue through
/// it, in the mark request this trigger parses (``SocketRequest/parseMark(_:_:id:)``). The
/// wire format stays here, with its parser; the host only asks.
extension SocketTrigger: SessionEntrance {
    /// The socket's path.
    public var sessionAddress: String { options.path }

    /// Sends the mark request to the socket at `address` and reads the session's reply.
    public func sendMarks(_ changes: [ShotMarkChange], of id: Int, camera: String?, to address: String, timeout: Duration) throws(SessionEntranceFailure) -> String {
        let line = try Self.markLine(id, camera: camera, changes)
        let reply: Data
        do {
            reply = try SessionSocket.request(line, to: address, timeout: timeout)
        } catch {
            if case .noSession = error { throw .noSession(error.description) }
            throw .failed(error.description)
        }
        return try Self.markReport(reply)
    }

    /// `{"mark":12,"rating":4}` (`"camera":"B"` for one camera's frame), a line.
    /// A change this build does not know (a newer contract's) is refused, not dropped.
    static func markLine(_ id: Int, camera: String?, _ changes: [ShotMarkChange]) throws(SessionEntranceFailure) -> Data {
        var object: [String: Any] = ["mark": id]
        if let camera { object["camera"] = camera }
        for change in changes {
            switch change {
            case .rating(let value): object["rating"] = value
            case .label(let label): object["label"] = label ?? "none"
            case .pick(let pick): object["pick"] = pick.word ?? "none"
            case .addKeywords(let words): object["keywords"] = words
            case .removeKeywords(let words): object["removeKeywords"] = words
            @unknown default: throw .failed("the socket trigger cannot send the mark change \(change): it is newer than this shutterpipe's socket; update shutterpipe")
            }
        }
        var line = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        line.append(UInt8(ascii: "\n"))
        return line
    }

    /// The session's reply to a mark request, in a line for the user; a refusal throws.
    static func markReport(_ reply: Data) throws(SessionEntranceFailure) -> String {
        guard let decoded = try? JSONDecoder().decode(SocketReply.self, from: reply) else {
            throw .failed("unreadable answer from the session: \(String(decoding: reply, as: UTF8.self).prefix(200))")
        }
        if let error = decoded.error { throw .failed("the session refused the mark: \(error)") }
        guard let marked = decoded.marked else { throw .failed("the session did not mark the shot: \(decoded.message ?? "no reason given")") }
        return (decoded.summary ?? "marked") + (marked.keywords.isEmpty ? "" : ", keywords \(marked.keywords.joined(separator: ", "))")
            + " (through the running session)"
    }
}
