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
        // With --catalogue the config is only asked for its way into the session (a broken
        // one is passed over); without, it names the catalogue too.
        let configured = catalogue == nil ? try pipeline(context) : try? pipeline(context)
        // A session that holds the catalogue takes the mark, whichever option named it: its
        // pages hear of it, and nothing writes behind its back.
        if let file = try? catalogueFile(context, pipeline: configured), let holder = SessionClaim.holder(of: Catalogue.absolute(file)) {
            guard let address = holder.socket else {
                throw CommandFailure("the session that runs (process \(holder.pid)) holds the catalogue '\(file)', and has no socket trigger to take marks: mark on its page, or add a socket trigger to its config")
            }
            switch await send(changes, of: id, to: address, through: try entrance(configured, context)) {
            case .success(let line):
                context.output.printLine(line)
                return CommandContext.success
            case .failure(let failure):
                throw CommandFailure("the session that runs (process \(holder.pid)) holds the catalogue '\(file)': \(failure)")
            }
        }
        if catalogue == nil, let address = socket.map(PluginOptions.expandingTilde) ?? configured.flatMap({ CatalogueSetting.entrance(of: $0)?.sessionAddress }) {
            switch await send(changes, of: id, to: address, through: try entrance(configured, context)) {
            case .success(let line):
                context.output.printLine(line)
                return CommandContext.success
            case .failure(.noSession) where socket == nil:
                break  // no session runs: the catalogue directly
            case .failure(let failure):
                throw CommandFailure(failure.description)
            }
        }
        let catalogue = try Catalogue.open(at: try catalogueFile(context, pipeline: configured), create: false)
        let outcome = try CatalogueMarker.mark(id, frames: camera.map { .camera($0) } ?? .all, changes, in: catalogue)
        context.output.printLine(Self.summary(outcome.shot, camera: camera, changes)
            + (outcome.written.isEmpty ? " (no file on disk: catalogue only)" : "; written to \(outcome.written.joined(separator: ", "))"))
        return CommandContext.success
    }

    /// Hands the marks to the session at `address` through `entrance`, on a thread of its own.
    private func send(_ changes: [ShotMarkChange], of id: Int, to address: String, through entrance: any SessionEntrance) async -> Result<String, SessionEntranceFailure> {
        let camera = camera
        return await BlockingQueue(label: "shots-session").run {
            Result { () throws(SessionEntranceFailure) in try entrance.sendMarks(changes, of: id, camera: camera, to: address, timeout: .seconds(30)) }
        }
    }

    /// What speaks to a running session: the config's first trigger that is a way in
    /// (``SessionEntrance``), else one made with its defaults from the first such type
    /// registered. The host asks by ability, and knows no trigger's name or wire format.
    func entrance(_ configured: Pipeline?, _ context: CommandContext) throws -> any SessionEntrance {
        if let configured, let entrance = CatalogueSetting.entrance(of: configured) { return entrance }
        for descriptor in context.registry.descriptors where descriptor.kind == .trigger && descriptor.abilities.contains(.sessionEntrance) {
            let location = SourceLocation(file: "(defaults)", line: 1, column: 1)
            let spec = PluginSpec(kind: .trigger, type: descriptor.type, typeLocation: location, name: descriptor.type,
                                  options: try PluginOptions(ConfigNode(.mapping([]), at: location), owner: "\(descriptor.type) trigger"))
            let made = try context.registry.makeTrigger(spec, environment: PluginEnvironment(session: "shots", instanceName: descriptor.type, log: .discarding, console: context.errors))
            if let entrance = made as? any SessionEntrance { return entrance }
        }
        throw CommandFailure("no trigger type that reaches a running session is known (the socket trigger is one): marks cannot be handed to the session; mark on its page")
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
