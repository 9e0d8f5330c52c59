import Foundation
import ShutterPipeCatalogue
import ShutterPipeKit
import ShutterPipeRuntime
import ShutterPipeSupport

/// `shots rate|label|pick|reject|unpick|keyword|unkeyword`: through the running session
/// when one listens, else on the catalogue itself.
extension ShotsCommand {
    /// Applies `changes` to shot `id`, and says where they went.
    func mark(_ id: Int, _ changes: [ShotMarkChange], _ context: CommandContext) async throws -> Int32 {
        // A session that holds the catalogue takes the mark, whichever option named it: its
        // pages hear of it, and nothing writes behind its back.
        if let file = try? catalogueFile(context), let holder = SessionClaim.holder(of: Catalogue.absolute(file)) {
            guard let path = holder.socket else {
                throw CommandFailure("the session that runs (process \(holder.pid)) holds the catalogue '\(file)', and has no socket trigger to take marks: mark on its page, or add a socket trigger to its config")
            }
            let line = Self.requestLine(id, camera: camera, changes)
            let outcome = await BlockingQueue(label: "shots-socket").run { () -> Result<Data, SessionSocket.Failure> in
                Result { () throws(SessionSocket.Failure) in try SessionSocket.request(line, to: path, timeout: .seconds(30)) }
            }
            switch outcome {
            case .success(let reply): return try Self.report(reply, context)
            case .failure(let failure): throw CommandFailure("the session that runs (process \(holder.pid)) holds the catalogue '\(file)': \(failure.description)")
            }
        }
        if catalogue == nil, let path = try sessionSocket() {
            let queue = BlockingQueue(label: "shots-socket")
            let line = Self.requestLine(id, camera: camera, changes)
            let outcome = await queue.run { () -> Result<Data, SessionSocket.Failure> in
                Result { () throws(SessionSocket.Failure) in try SessionSocket.request(line, to: path, timeout: .seconds(30)) }
            }
            switch outcome {
            case .success(let reply):
                return try Self.report(reply, context)
            case .failure(.noSession) where socket == nil:
                break  // no session runs: the catalogue directly
            case .failure(let failure):
                throw CommandFailure(failure.description)
            }
        }
        let catalogue = try Catalogue.open(at: try catalogueFile(context), create: false)
        let outcome = try CatalogueMarker.mark(id, frames: camera.map { .camera($0) } ?? .all, changes, in: catalogue)
        context.output.printLine(Self.summary(outcome.shot, camera: camera, changes)
            + (outcome.written.isEmpty ? " (no file on disk: catalogue only)" : "; written to \(outcome.written.joined(separator: ", "))"))
        return CommandContext.success
    }

    /// The session's socket: `--socket`, else the config's first `socket` trigger's `path`
    /// (its default when it names none); `nil` when the config has no socket trigger.
    func sessionSocket() throws -> String? {
        if let socket { return PluginOptions.expandingTilde(socket) }
        let path = config ?? RunCommand.defaultConfig
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try CatalogueSetting.sessionSocket(of: PipelineConfig(root: YAMLLoader.load(file: path), hostKeys: PipelineLoader.hostKeys))
    }

    /// `{"mark":12,"rating":4}`: the socket trigger's mark request (`"camera":"B"` for
    /// one camera's frame).
    static func requestLine(_ id: Int, camera: String? = nil, _ changes: [ShotMarkChange]) -> Data {
        var object: [String: Any] = ["mark": id]
        if let camera { object["camera"] = camera }
        for change in changes {
            switch change {
            case .rating(let value): object["rating"] = value
            case .label(let label): object["label"] = label ?? "none"
            case .pick(let pick): object["pick"] = pick.word ?? "none"
            case .addKeywords(let words): object["keywords"] = words
            case .removeKeywords(let words): object["removeKeywords"] = words
            }
        }
        var line = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        line.append(UInt8(ascii: "\n"))
        return line
    }

    /// Prints the session's reply to a mark request; a refusal is a failure.
    static func report(_ reply: Data, _ context: CommandContext) throws -> Int32 {
        guard let object = try? JSONSerialization.jsonObject(with: reply) as? [String: Any] else {
            throw CommandFailure("unreadable answer from the session: \(String(decoding: reply, as: UTF8.self).prefix(200))")
        }
        if let error = object["error"] as? String { throw CommandFailure("the session refused the mark: \(error)") }
        guard let marked = object["marked"] as? [String: Any] else {
            throw CommandFailure("the session did not mark the shot: \(object["message"] as? String ?? "no reason given")")
        }
        let keywords = marked["keywords"] as? [String] ?? []
        context.output.printLine("\(object["summary"] as? String ?? "marked")"
            + (keywords.isEmpty ? "" : ", keywords \(keywords.joined(separator: ", "))") + " (through the running session)")
        return CommandContext.success
    }

    /// "shot 12: rating 4, label Red, picked" ("shot 12 frame B: …" for one camera's
    /// frame), with the keywords when they changed.
    static func summary(_ shot: CatalogueShot, camera: String? = nil, _ changes: [ShotMarkChange]) -> String {
        let keywordsChanged = changes.contains { change in
            if case .addKeywords = change { return true }
            if case .removeKeywords = change { return true }
            return false
        }
        if keywordsChanged {
            return "shot \(shot.id): keywords \(shot.keywords.isEmpty ? "none" : shot.keywords.joined(separator: ", "))"
        }
        let marks = camera.flatMap { shot.frame($0)?.marks } ?? shot.marks
        let rating = marks.pick == .rejected ? "rejected" : "rating \(marks.rating)"
        return "shot \(shot.id)\(camera.map { " frame \($0)" } ?? ""): \(rating), label \(marks.label ?? "none"), \(marks.pick.word ?? "not picked")"
    }
}
