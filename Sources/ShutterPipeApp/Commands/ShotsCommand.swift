#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import ShutterPipeCatalogue
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import ShutterPipeRuntime

/// `shutterpipe shots`: lists the catalogue's shots, marks them, rebuilds it from folders.
struct ShotsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shots", abstract: "list, rate, label, pick and reject shots; rebuild the catalogue from folders",
        discussion: """
        shutterpipe shots                     the shots of the catalogue, newest first
        shutterpipe shots rate ID 0-5         a rating (0: none)
        shutterpipe shots label ID COLOUR     a colour label (Red, Yellow, Green, Blue, Purple; none to clear)
        shutterpipe shots pick ID             a pick; reject ID rejects, unpick ID clears either
        shutterpipe shots keyword ID WORD...  keywords (unkeyword ID WORD... removes them)
        shutterpipe shots rebuild DIR         a new catalogue made from the photos and sidecars in DIR
        shutterpipe shots shotlist            the config's shot list: each product's photos, done and left

        The catalogue is the one the config's session writes (--config, or \(RunCommand.defaultConfig)),
        or --catalogue PATH. Ratings, labels and rejects go to each file's XMP sidecar first
        (merged with what is there; named as the files sink's sidecarName says), then to the
        catalogue. While a session that holds the catalogue runs, marks go through its socket
        (the session writes and logs them, its pages hear of them), whether --config or
        --catalogue named it; a session without a socket trigger refuses them. With no
        session running, they go to the catalogue directly. A shot of several cameras holds
        a frame per camera, each with marks of its own: --camera NAME marks that camera's
        frame (shots rate 12 4 --camera B); without it a mark goes to every frame. rebuild keeps the old catalogue beside the new one
        (NAME.before-rebuild-TIME).
        """)

    @Argument(valueName: "ACTION", help: "nothing to list; rate, label, pick, reject, unpick, keyword, unkeyword or rebuild with their arguments")
    var words: [String] = []

    @Option(short: "c", valueName: "FILE", help: "find the catalogue from this config (default: \(RunCommand.defaultConfig))")
    var config: String?

    @Option(valueName: "PATH", help: "the catalogue file itself (marks then go to it directly, not through a running session)")
    var catalogue: String?

    @Option(valueName: "PATH", help: "the running session's socket, for marks (default: the config's socket trigger's)")
    var socket: String?

    @Option(valueName: "NAME", help: "only this session's shots")
    var session: String?

    @Option(valueName: "NAME", help: "only this camera's shots (its name in the config, or its model); with rate, label, pick…: only its frame of the shot")
    var camera: String?

    @Option(valueName: "COMPARISON", help: "only shots rated so: 3, '>=3', '<2'; -1 for rejects")
    var rating: String?

    @Option(valueName: "COLOUR", help: "only shots with this label")
    var label: String?

    @Option(name: "session-label", valueName: "TEXT", help: "only shots taken under this session label ({label}: an order number, a scanned code)")
    var sessionLabel: String?

    @Option(valueName: "NAME", help: "only the frames of this sequence (its name in the config), grouped by run")
    var sequence: String?

    @Option(valueName: "WORD", help: "only shots with this keyword")
    var keyword: String?

    @Flag(help: "only picked shots")
    var picked = false

    @Flag(help: "only rejected shots")
    var rejected = false

    @Flag(help: "only shots that failed")
    var failed = false

    @Option(valueName: "WHEN", help: "only shots since then: 2026-12-03, '2026-12-03 14:00', or 2h, 30m, 1d ago")
    var since: String?

    @Option(valueName: "N", help: "at most N shots")
    var limit: Int?

    @Flag(help: "JSON: one array of shots with their files")
    var json = false

    @Flag(help: "one path per line (every file of every shot), for other tools")
    var paths = false

    func run(_ context: CommandContext) async throws -> Int32 {
        guard let action = words.first else { return try list(context) }
        let arguments = Array(words.dropFirst())
        switch action {
        case "rate":
            guard arguments.count == 2, let id = Int(arguments[0]), let value = Int(arguments[1]), (0...5).contains(value) else {
                throw UsageError("rate takes a shot id and a rating from 0 to 5: shots rate 12 4")
            }
            return try await mark(id, [.rating(value)], context)
        case "label":
            guard arguments.count == 2, let id = Int(arguments[0]) else {
                throw UsageError("label takes a shot id and a colour: shots label 12 red (none to clear)")
            }
            return try await mark(id, [.label(ShotMarkChange.labelName(arguments[1]))], context)
        case "pick", "reject", "unpick":
            guard arguments.count == 1, let id = Int(arguments[0]) else { throw UsageError("\(action) takes a shot id: shots \(action) 12") }
            let pick: Pick = action == "pick" ? .picked : action == "reject" ? .rejected : .none
            return try await mark(id, [.pick(pick)], context)
        case "keyword", "unkeyword":
            guard arguments.count >= 2, let id = Int(arguments[0]) else {
                throw UsageError("\(action) takes a shot id and one or more keywords: shots \(action) 12 \"look 12\" bride")
            }
            let words = Array(arguments.dropFirst())
            return try await mark(id, [action == "keyword" ? .addKeywords(words) : .removeKeywords(words)], context)
        case "shotlist":
            guard arguments.isEmpty else { throw UsageError("shotlist takes nothing: shots shotlist --config studio.yaml") }
            return try shotList(context)
        case "rebuild":
            guard arguments.count == 1 else { throw UsageError("rebuild takes the folder of the photos: shots rebuild ./captures") }
            return try rebuild(arguments[0], context)
        default:
            throw UsageError("unknown action '\(action)'; use rate, label, pick, reject, unpick, keyword, unkeyword, rebuild or shotlist, or nothing to list")
        }
    }

    // MARK: Finding the catalogue

    /// The catalogue named by `--catalogue`, else by the config (`pipeline`, made from it).
    func catalogueFile(_ context: CommandContext, pipeline configured: Pipeline? = nil) throws -> String {
        if let catalogue { return PluginOptions.expandingTilde(catalogue) }
        let path = config ?? RunCommand.defaultConfig
        guard let pipeline = try configured ?? self.pipeline(context) else {
            throw CommandFailure("no --config or --catalogue given and \(path) is not in this folder; pass --config FILE or --catalogue PATH")
        }
        let setting = try CatalogueSetting(pipeline.config, pipeline: pipeline)
        guard let file = setting.path else {
            throw CommandFailure(setting.note ?? "\(path) turns the catalogue off ('catalogue: off'); pass --catalogue PATH")
        }
        return file
    }

    /// The pipeline of `--config` (or the default config, when it is there): every plugin
    /// made from its options (factories open nothing), so that the catalogue's folders and
    /// the session's way in are asked of the plugins themselves; `nil` without a config.
    func pipeline(_ context: CommandContext) throws -> Pipeline? {
        let path = config ?? RunCommand.defaultConfig
        guard config != nil || FileManager.default.fileExists(atPath: path) else { return nil }
        return try PipelineLoader.load(path, registry: context.registry, log: .discarding, console: context.errors)
    }

    // MARK: Listing

    func list(_ context: CommandContext) throws -> Int32 {
        var filter = ShotFilter()
        filter.session = session
        filter.camera = camera
        if let rating {
            guard let parsed = ShotFilter.parseRating(rating) else { throw UsageError("--rating takes 3, '>=3', '<=2', '>1', '<4' or -1; got '\(rating)'") }
            filter.rating = parsed
        }
        filter.label = label.flatMap { ShotMarkChange.labelName($0) }
        filter.sessionLabel = sessionLabel
        filter.sequence = sequence
        filter.keyword = keyword
        filter.pickedOnly = picked
        filter.rejectedOnly = rejected
        filter.failedOnly = failed
        if let since {
            guard let date = Self.moment(since) else { throw UsageError("--since takes 2026-12-03, '2026-12-03 14:00' or 2h, 30m, 1d; got '\(since)'") }
            filter.since = date
        }
        filter.limit = limit
        let catalogue = try Catalogue.open(at: try catalogueFile(context), create: false)
        let shots = try catalogue.shots(filter)
        if json {
            context.output.printLine(ShotJSON.encode(shots))
        } else if paths {
            for shot in shots { for file in shot.files where !file.missing { context.output.printLine(file.path) } }
        } else {
            context.output.printLine(Self.table(shots))
        }
        return CommandContext.success
    }

    /// `2h`, `30m`, `1d` ago, or a date with an optional time, in local time.
    static func moment(_ text: String) -> Date? {
        if let last = text.last, let unit = ["m": 60.0, "h": 3600.0, "d": 86400.0][String(last)], let count = Double(text.dropLast()) {
            return Date().addingTimeInterval(-count * unit)
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        for format in ["yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm", "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }

    /// A mark of a shot of one camera; of a shot of several, each frame's: "A:*** B:x".
    static func perFrame(_ shot: CatalogueShot, _ text: (ShotMarks) -> String) -> String {
        guard shot.frames.count > 1 else { return text(shot.marks) }
        return shot.frames.map { "\($0.camera ?? "-"):\(text($0.marks))" }.joined(separator: " ")
    }

    /// A frame's place: `stack#2 3/9 focusdistance=1800`, `bracket#1 2/5 -1 EV`.
    static func place(_ place: CatalogueSequencePlace) -> String {
        var words = ["\(place.name)#\(place.run) \(place.index)/\(place.count)"]
        if let ev = place.ev { words.append(String(format: "%+g EV", ev)) } else if let setting = place.setting, let value = place.value { words.append("\(setting)=\(value)") }
        // A place read back from a photo's XMP is text from outside: no control character reaches the terminal.
        return LogText.escaped(words.joined(separator: " "))
    }

    static func table(_ shots: [CatalogueShot]) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        let sequences = shots.contains { $0.sequence != nil }
        var rows = [["ID", "WHEN", "SESSION", "CAMERA", "TRIGGER", "STATE", "RATING", "LABEL", "PICK"] + (sequences ? ["SEQUENCE"] : []) + ["FILES"]]
        for shot in shots {
            let files = shot.files.map { PathName.lastComponent($0.path) + ($0.missing ? " (missing)" : "") }
            rows.append([
                String(shot.id), shot.moment.map(formatter.string(from:)) ?? "-", shot.session ?? "-", shot.camera ?? shot.exif.model ?? "-",
                shot.trigger ?? "-", shot.state == .failed ? "failed: \(shot.failureCause ?? "?")" : shot.state.rawValue,
                Self.perFrame(shot) { $0.pick == .rejected ? "x" : $0.rating == 0 ? "-" : String(repeating: "*", count: $0.rating) },
                Self.perFrame(shot) { $0.label ?? "-" }, Self.perFrame(shot) { $0.pick.word ?? "-" },
            ] + (sequences ? [shot.sequence.map(Self.place) ?? "-"] : []) + [files.isEmpty ? "-" : files.joined(separator: " ")])
        }
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        var lines = rows.map { row in
            row.enumerated().map { column, cell in column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
        }
        lines.append("\(shots.count) shot(s)")
        return lines.joined(separator: "\n")
    }

    // MARK: Rebuilding

    func rebuild(_ folder: String, _ context: CommandContext) throws -> Int32 {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw CommandFailure("'\(folder)' is not a folder; name the folder of the photos")
        }
        let file = catalogue.map(PluginOptions.expandingTilde) ?? CatalogueRecorder.defaultPath(photosIn: folder)
        if FileManager.default.fileExists(atPath: file) {
            let stamp = ISO8601DateFormatter.string(from: Date(), timeZone: .current, formatOptions: [.withYear, .withMonth, .withDay, .withTime])
            let aside = "\(file).before-rebuild-\(stamp)"
            guard rename(file, aside) == 0 else { throw CommandFailure("cannot move the old catalogue '\(file)' aside: \(String(cString: strerror(errno)))") }
            for suffix in ["-wal", "-shm"] { _ = rename(file + suffix, aside + suffix) }
            context.errors.printLine("the old catalogue is now '\(aside)'")
        }
        let catalogue = try Catalogue.open(at: file)
        let started = ContinuousClock.now
        let report = try catalogue.reconcile(folders: [folder], naming: catalogue.sidecarNaming())
        for refusal in report.refusedSidecars { context.errors.printLine("\(LogText.escaped(refusal)): its marks are not taken (remove or replace it)") }
        context.output.printLine("\(file): \(report.importedShots) shot(s) from \(folder) (\(ContinuousClock.now - started))")
        return CommandContext.success
    }
}

/// A command that could not do its job: the message says why and what to do.
struct CommandFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
