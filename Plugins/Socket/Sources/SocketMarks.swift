import Foundation
import ShutterPipeKit

/// A shot's marks in a reply: `{"marked":{"id":12,"rating":4,…}}`.
public struct MarkedShot: Codable, Sendable, Equatable {
    /// The shot's catalogue id.
    public var id: Int
    /// The identity the session gave it (`RUN#NUMBER`), when a session took it.
    public var shotID: String?
    public var rating: Int
    public var label: String?
    /// "picked", "rejected", or absent.
    public var pick: String?
    public var keywords: [String]
    /// The files it has on disk.
    public var files: [String]
    /// Each camera's frame and its marks (one for a shot of one camera, whose marks are
    /// the shot's).
    public var frames: [MarkedFrame]

    /// The marks of `shot`.
    public init(_ shot: CatalogueShot) {
        id = shot.id
        shotID = shot.shotID?.description
        rating = shot.rating
        label = shot.label
        pick = shot.pick.word
        keywords = shot.keywords
        files = shot.files.filter { !$0.missing }.map(\.path)
        frames = shot.frames.map { MarkedFrame(camera: $0.camera, rating: $0.rating, label: $0.label, pick: $0.pick.word) }
    }
}

/// A frame's marks in a reply: `{"camera":"B","rating":4}`.
public struct MarkedFrame: Codable, Sendable, Equatable {
    /// The camera, by its name in the config; absent for a session's only camera.
    public var camera: String?
    public var rating: Int
    public var label: String?
    /// "picked", "rejected", or absent.
    public var pick: String?
}

extension SocketRequest {
    /// Reads `{"mark":12,"rating":4,"label":"red","pick":"picked","keywords":["a"],"removeKeywords":["b"]}`:
    /// any of the changes, at least one. `label` "none" clears it; `pick` is "picked",
    /// "rejected" or "none". `"camera":"B"` marks that camera's frame of the shot only.
    static func parseMark(_ mark: JSONValue, _ object: [String: JSONValue], id: JSONValue?) -> Parsed {
        let usage = "a mark request names a shot by its catalogue id and what to change: {\"mark\":12,\"rating\":4}; also \"label\", \"pick\" (picked, rejected, none), \"keywords\", \"removeKeywords\""
        guard case .integer(let shot) = mark, shot > 0 else { return .rejected(SocketReply(error: usage, id: id)) }
        var changes: [ShotMarkChange] = []
        if let rating = object["rating"] {
            guard case .integer(let value) = rating, (0...5).contains(value) else {
                return .rejected(SocketReply(error: "\"rating\" takes a whole number from 0 (none) to 5", id: id))
            }
            changes.append(.rating(Int(value)))
        }
        if let label = object["label"] {
            guard label == .null || label.string != nil else { return .rejected(SocketReply(error: "\"label\" takes a colour name, or \"none\"", id: id)) }
            changes.append(.label(label.string.flatMap(ShotMarkChange.labelName)))
        }
        if let pick = object["pick"] {
            guard let value = pick.string.flatMap(Pick.init(word:)) else {
                return .rejected(SocketReply(error: "\"pick\" takes \"picked\", \"rejected\" or \"none\"", id: id))
            }
            changes.append(.pick(value))
        }
        for (key, make) in [("keywords", ShotMarkChange.addKeywords), ("removeKeywords", ShotMarkChange.removeKeywords)] {
            guard let value = object[key] else { continue }
            guard case .array(let items) = value, !items.isEmpty, items.allSatisfy({ $0.string?.isEmpty == false }) else {
                return .rejected(SocketReply(error: "\"\(key)\" takes a list of words, such as [\"look 12\"]", id: id))
            }
            changes.append(make(items.compactMap(\.string)))
        }
        guard !changes.isEmpty else { return .rejected(SocketReply(error: usage, id: id)) }
        var camera: String?
        if let named = object["camera"] {
            guard let text = named.string, !text.isEmpty else { return .rejected(SocketReply(error: "\"camera\" takes a camera's name, as the config names it", id: id)) }
            camera = text
        }
        return .mark(Int(shot), camera: camera, changes, id: id)
    }
}

extension SocketReply {
    /// The reply to a mark request that was applied.
    public init(marked shot: CatalogueShot, camera: String? = nil, id: JSONValue?, ms: Int) {
        self.id = id
        event = "mark"
        self.ms = ms
        marked = MarkedShot(shot)
        let marks = camera.flatMap { shot.frame($0)?.marks } ?? shot.marks
        summary = "shot \(shot.id)\(camera.map { " frame \($0)" } ?? ""): " + (marks.pick == .rejected ? "rejected" : "rating \(marks.rating)")
            + ", label \(marks.label ?? "none"), \(marks.pick.word ?? "not picked")"
    }

    /// The reply to a mark request that failed.
    public init(markFailed failure: ShutterError, id: JSONValue?) {
        self.id = id
        event = "mark"
        cause = failure.cause.rawValue
        message = failure.description
        summary = "mark failed: \(failure.description)"
    }
}
