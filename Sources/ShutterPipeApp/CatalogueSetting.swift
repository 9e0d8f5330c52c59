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
/// first archive sink's folder (the part of its folder before any placeholder), and it
/// indexes the photos of every archive sink. An archive sink is one that says where it
/// keeps photos (``PhotoArchive``: the `files` sink, or a third-party one); the session's
/// socket for marks is that of its first trigger that lets programs reach it
/// (``SessionEntrance``). The host asks the plugins, never reads their options.
struct CatalogueSetting {
    /// The catalogue file; `nil` when off.
    var path: String?
    /// The folders of the photos it indexes.
    var folders: [String]
    /// The archive sinks' sidecar naming (the first one's).
    var naming: SidecarNaming
    /// Why it is off, when the config did not say so itself.
    var note: String?
    /// Ratings and labels also go into JPEGs themselves (for Lightroom).
    var marksInJPEG = true
    /// The address through which marks reach the running session (its first session
    /// entrance's), for its claim on the catalogue.
    var sessionSocket: String?

    /// The setting of `config`, whose plugins `pipeline` made.
    init(_ config: PipelineConfig, pipeline: Pipeline) throws {
        sessionSocket = Self.entrance(of: pipeline)?.sessionAddress
        let archives = pipeline.sinks.filter { $0.abilities.contains(.photoArchive) }.compactMap { ($0.sink as? any PhotoArchive)?.archive }
        folders = archives.compactMap(\.folder)
        naming = archives.first?.sidecarNaming ?? .append
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
                if path == nil { throw block.error("no sink that keeps photos in a fixed folder to keep the catalogue beside; set 'path'") }
            default:
                throw ConfigError("config: 'catalogue' must be 'off' or a map with a 'path'", at: node.location)
            }
            return
        }
        if let first = folders.first {
            path = CatalogueRecorder.defaultPath(photosIn: first)
        } else {
            path = nil
            if !archives.isEmpty {
                note = "catalogue: off: the photos' folder has no fixed part before its placeholders; set catalogue.path to keep one"
            }
        }
    }

    /// The pipeline's first trigger that lets programs reach the running session.
    static func entrance(of pipeline: Pipeline) -> (any SessionEntrance)? {
        pipeline.triggers.lazy.filter { $0.abilities.contains(.sessionEntrance) }.compactMap { $0.source as? any SessionEntrance }.first
    }

    /// The catalogue sink for a pipeline, or `nil` when off.
    func sink(session: String, log: Logger) -> NamedSink? {
        guard let path else { return nil }
        return NamedSink(name: "catalogue", sink: CatalogueRecorder(options: .init(path: path, folders: folders, naming: naming, marksInJPEG: marksInJPEG, sessionSocket: sessionSocket),
                                                                 session: session, log: log.named("catalogue")))
    }
}
