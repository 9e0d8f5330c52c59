import Foundation
import ShutterPipeApp
import ShutterPipeCatalogue
import ShutterPipeKit
import ShutterPipeRuntime
import TestSupport
import Testing

/// A third-party sink that keeps photos in a folder of its own (`folder:`), its sidecars
/// named as Lightroom does: the catalogue must find it by what it says, not by its name.
private final class VaultSink: PhotoSink, PhotoArchive {
    let folder: String
    init(folder: String) { self.folder = folder }
    var archive: ArchiveLayout { ArchiveLayout(folder: folder, sidecarNaming: .replace) }
    func store(_ photo: CapturedPhoto, context: ShotContext) async throws -> SinkReceipt { SinkReceipt(files: []) }
}

/// A sink that keeps nothing of its own.
private final class NotifySink: PhotoSink {
    func store(_ photo: CapturedPhoto, context: ShotContext) async throws -> SinkReceipt { SinkReceipt(files: []) }
}

@Suite("the host asks plugins by ability, never by type name or option key", .timeLimit(.minutes(2)))
struct AskedByAbilityTests {
    static func registry() throws -> PluginRegistry {
        let registry = BuiltInPlugins.registry()
        try registry.registerSink("vault", summary: "keeps photos in a vault", abilities: [.photoArchive]) { options, _ in
            VaultSink(folder: try options.string("folder", default: "./vault"))
        }
        try registry.registerSink("notify", summary: "tells someone") { _, _ in NotifySink() }
        return registry
    }

    static func catalogue(_ yaml: String) throws -> CatalogueRecorder.Options? {
        let root = try YAMLLoader.parse(yaml, file: "studio.yaml", environment: [:])
        let pipeline = try PipelineLoader.make(root, registry: try registry(), log: .discarding, console: Console { _ in })
        return pipeline.sinks.compactMap { ($0.sink as? CatalogueRecorder)?.options }.first
    }

    static let head = "version: 1\nsession: s\nbackend: {type: file-stub}\n"

    @Test("a third-party sink that says where it keeps photos gets the catalogue beside them and marks in its sidecars' naming; a files sink beside it is indexed too; the socket trigger's path is asked of it")
    func archiveSink() throws {
        let options = try #require(try Self.catalogue(Self.head + """
            triggers: [{type: socket, path: /tmp/asked-by-ability.sock}]
            sinks:
              - {type: vault, folder: /srv/vault}
              - {type: files, directory: "/srv/captures/{session}", sidecarName: append}
            """))
        #expect(options.path == "/srv/vault/.shutterpipe/catalogue.sqlite")
        #expect(options.folders == ["/srv/vault", "/srv/captures"])
        #expect(options.naming == .replace, "the first archive's naming")
        #expect(options.sessionSocket == "/tmp/asked-by-ability.sock")
    }

    @Test("sinks that keep no photos of their own give no catalogue; a files sink whose folder starts with a placeholder gives none either, with the fix")
    func noArchive() throws {
        #expect(try Self.catalogue(Self.head + "triggers: [{type: stdin}]\nsinks: [{type: notify}]\n") == nil)
        #expect(try Self.catalogue(Self.head + "triggers: [{type: stdin}]\nsinks: [{type: files, directory: \"{session}/x\"}]\n") == nil)
        let pathGiven = try #require(try Self.catalogue(Self.head + "triggers: [{type: stdin}]\nsinks: [{type: notify}]\ncatalogue: {path: /tmp/c.sqlite}\n"))
        #expect(pathGiven.folders.isEmpty && pathGiven.sessionSocket == nil)
    }

    @Test("sidecar naming is one type: append and replace on names with several dots, a leading dot, a trailing dot and folders with dots")
    func sidecarNaming() {
        #expect(SidecarNaming.append.sidecar(of: "/a/IMG_1.CR2") == "/a/IMG_1.CR2.xmp")
        #expect(SidecarNaming.replace.sidecar(of: "/a/IMG_1.CR2") == "/a/IMG_1.xmp")
        #expect(SidecarNaming.replace.sidecar(of: "/a.b/IMG_1") == "/a.b/IMG_1.xmp")
        #expect(SidecarNaming.replace.sidecar(of: "/a/x.tar.gz") == "/a/x.tar.xmp")
        #expect(SidecarNaming.replace.sidecar(of: "/a/.hidden") == "/a/.hidden.xmp")
        #expect(SidecarNaming.replace.sidecar(of: "/a/name.") == "/a/name..xmp")
        #expect(SidecarNaming.replace.sidecar(of: "ÉTÉ.jpg") == "ÉTÉ.xmp")
    }
}
