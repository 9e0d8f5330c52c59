import ShutterPipeCatalogue
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import ShutterPipeRuntime

/// The config's `catalogue:` key (docs/config.md): where the session catalogue is, or that
/// there is none.
///
/// ```yaml
/// catalogue: off                      # no catalogue
/// catalogue:
///   path: ~/shoots/catalogue.sqlite   # one catalogue for many configs (default: beside the photos)
///   marksInJPEG: true                 # ratings and labels inside JPEGs too, for Lightroom (the default)
/// ```
///
/// Without the key the catalogue is on, in `.shutterpipe/catalogue.sqlite` inside the
/// first `files` sink's folder (the part of `directory` before any placeholder), and it
/// indexes the photos of every `files` sink.
struct CatalogueSetting {
    /// The catalogue file; `nil` when off.
    var path: String?
    /// The folders of the photos it indexes.
    var folders: [String]
    /// The files sinks' sidecar naming.
    var naming: XMPSidecar.Naming
    /// Why it is off, when the config did not say so itself.
    var note: String?
    /// Ratings and labels also go into JPEGs themselves (for Lightroom).
    var marksInJPEG = true
    /// The socket through which marks reach the running session (its first socket
    /// trigger's), for its claim on the catalogue.
    var sessionSocket: String?

    init(_ config: PipelineConfig) throws {
        sessionSocket = try Self.sessionSocket(of: config)
        let filesSinks = config.sinks.filter { $0.type == "files" }
        folders = try filesSinks.compactMap { spec in
            Self.fixedFolder(PluginOptions.expandingTilde(try spec.options.string("directory") ?? "./captures"))
        }
        naming = try filesSinks.first.flatMap { try $0.options.string("sidecarName") }.flatMap(XMPSidecar.Naming.init(rawValue:)) ?? .append
        note = nil
        let top = config.topLevel
        if let node = try top.node("catalogue") {
            switch node.value {
            case .scalar(let text, _) where ["off", "false", "no"].contains(text.lowercased()):
                path = nil
            case .mapping:
                let block = try top.nested(node, owner: "catalogue")
                path = try block.path("path") ?? folders.first.map(CatalogueRecorder.defaultPath(photosIn:))
                marksInJPEG = try block.bool("marksInJPEG", default: true)
                try block.rejectUnknownKeys()
                if path == nil { throw block.error("no files sink with a fixed folder to keep the catalogue beside; set 'path'") }
            default:
                throw ConfigError("config: 'catalogue' must be 'off' or a map with a 'path'", at: node.location)
            }
            return
        }
        if let first = folders.first {
            path = CatalogueRecorder.defaultPath(photosIn: first)
        } else {
            path = nil
            if !filesSinks.isEmpty {
                note = "catalogue: off: the files sink's folder has no fixed part before its placeholders; set catalogue.path to keep one"
            }
        }
    }

    /// The part of a `directory` template before its first placeholder, as a folder;
    /// `nil` when that is nothing or `/` (no folder to index).
    static func fixedFolder(_ directory: String) -> String? {
        guard let brace = directory.firstIndex(of: "{") else { return directory }
        let prefix = String(directory[..<brace])
        let folder = prefix.hasSuffix("/") ? String(prefix.dropLast()) : PathName.parent(prefix)
        return folder.isEmpty || folder == "/" ? nil : folder
    }

    /// The socket of a pipeline's first `socket` trigger (its default when it names none);
    /// nil when it has none.
    static func sessionSocket(of config: PipelineConfig) throws -> String? {
        guard let trigger = config.triggers.first(where: { $0.type == "socket" }) else { return nil }
        return try trigger.options.path("path") ?? SessionSocket.defaultPath
    }

    /// The catalogue sink for a pipeline, or `nil` when off.
    func sink(session: String, log: Logger) -> NamedSink? {
        guard let path else { return nil }
        return NamedSink(name: "catalogue", sink: CatalogueRecorder(options: .init(path: path, folders: folders, naming: naming, marksInJPEG: marksInJPEG, sessionSocket: sessionSocket),
                                                                 session: session, log: log.named("catalogue")))
    }
}
