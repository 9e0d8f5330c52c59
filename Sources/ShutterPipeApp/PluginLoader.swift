#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit

/// Where a plugin path came from, so a refusal names the place to fix.
public enum PluginPathSource: Sendable, Equatable, CustomStringConvertible {
    /// The config's `plugins.paths`, at this entry.
    case config(SourceLocation)
    /// A `--plugin-path` argument.
    case commandLine
    /// `$SHUTTERPIPE_PLUGIN_PATH`.
    case environment
    /// The `plugins` folder next to the installed program (`PREFIX/lib/shutterpipe/plugins`),
    /// searched without configuration.
    case installed

    /// How messages name it: "--plugin-path /opt/p", "SHUTTERPIPE_PLUGIN_PATH entry '/opt/p'".
    public func naming(_ path: String) -> String {
        switch self {
        case .config(let location): return "\(location): plugins.paths entry '\(path)'"
        case .commandLine: return "--plugin-path \(path)"
        case .environment: return "\(PluginLoader.environmentVariable) entry '\(path)'"
        case .installed: return "the installed plugins folder '\(path)'"
        }
    }

    public var description: String {
        switch self {
        case .config: return "the config's plugins.paths"
        case .commandLine: return "--plugin-path"
        case .environment: return "$\(PluginLoader.environmentVariable)"
        case .installed: return "the installed plugins folder"
        }
    }
}

/// A plugin path, with where it came from.
public struct PluginPath: Sendable, Equatable {
    /// A library, or a folder of them.
    public var path: String
    /// Where it was given.
    public var source: PluginPathSource

    public init(_ path: String, from source: PluginPathSource) {
        self.path = path
        self.source = source
    }
}

/// Why a plugin library was refused.
public struct PluginLoadError: Error, Sendable, CustomStringConvertible {
    /// The library.
    public var path: String
    /// Why.
    public var reason: String
    /// The path as given (the library, or the folder it was found in) and where.
    public var given: PluginPath?

    public var description: String { "plugin '\(path)' refused: \(reason)" }

    /// The message with the place it was given: "--plugin-path /opt/p: plugin … refused: …".
    public var located: String {
        guard let given else { return description }
        if case .config = given.source { return description }  // a config error carries the place itself
        return "\(given.source.naming(given.path)): \(description)"
    }
}

/// What loading a list of plugin paths came to.
public struct PluginLoadReport: Sendable {
    /// The libraries refused; none of them stopped the others.
    public var refusals: [PluginLoadError] = []
    /// One line per file in a plugin folder that is not a plugin and was skipped.
    public var notes: [String] = []
}

/// Loads third-party plugin libraries: `dlopen`, the contract and toolchain check, the entry point. A
/// library is never unloaded (Swift code cannot be unloaded safely).
public enum PluginLoader {
    /// The environment variable with plugin paths, separated by `:`.
    public static let environmentVariable = "SHUTTERPIPE_PLUGIN_PATH"

    /// The name of the SDK's own library, found in every SwiftPM build folder.
    static let coreLibrary = "libShutterPipeKit.so"

    /// The plugin paths from the environment.
    public static func environmentPaths(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> [PluginPath] {
        (environment[environmentVariable] ?? "").split(separator: ":").map(String.init).filter { !$0.isEmpty }
            .map { PluginPath($0, from: .environment) }
    }

    /// `$SHUTTERPIPE_PLUGIN_PATH`'s entries, then the `plugins` folder next to the running
    /// program when there is one (an install: scripts/install makes it).
    public static func defaultPaths() -> [PluginPath] {
        environmentPaths() + installedPaths()
    }

    /// The `plugins` folder next to the program (its real path: `bin/shutterpipe` is a link).
    public static func installedPaths() -> [PluginPath] {
        guard let program = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return [] }
        let folder = URL(fileURLWithPath: program).deletingLastPathComponent().appendingPathComponent("plugins").path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else { return [] }
        return [PluginPath(folder, from: .installed)]
    }

    /// Loads every path into `registry`: a file as it is; a folder, every `lib*.so` in
    /// it that is a plugin (the core library and other libraries are skipped with a note,
    /// as a SwiftPM build folder holds both). Nothing crashes, and no refusal stops the
    /// others.
    public static func load(_ paths: [PluginPath], into registry: PluginRegistry) -> PluginLoadReport {
        var report = PluginLoadReport()
        for given in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: given.path, isDirectory: &isDirectory), isDirectory.boolValue else {
                do throws(PluginLoadError) { try load(given.path, into: registry, skippingNonPlugins: false) } catch {
                    var error = error
                    error.given = given
                    report.refusals.append(error)
                }
                continue
            }
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: given.path)) ?? [])
                .filter { $0.hasPrefix("lib") && $0.hasSuffix(".so") }.sorted()
            for name in names {
                let library = "\(given.path)/\(name)"
                if name == coreLibrary {
                    report.notes.append("skipped \(library): the SDK's own library, not a plugin")
                    continue
                }
                do throws(PluginLoadError) {
                    if try !load(library, into: registry, skippingNonPlugins: true) {
                        report.notes.append("skipped \(library): not a shutterpipe plugin (it exports no shutterpipe_plugin_entry)")
                    }
                } catch {
                    var error = error
                    error.given = given
                    report.refusals.append(error)
                }
            }
        }
        return report
    }

    /// Loads one library. Returns false, registering nothing, for a library that is not
    /// a plugin when `skippingNonPlugins` (a folder's other libraries); else that refuses.
    @discardableResult
    public static func load(_ path: String, into registry: PluginRegistry, skippingNonPlugins: Bool = false) throws(PluginLoadError) -> Bool {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        guard FileManager.default.fileExists(atPath: absolute) else {
            let link = try? FileManager.default.destinationOfSymbolicLink(atPath: absolute)
            throw PluginLoadError(path: path, reason: link.map { "a symbolic link to '\($0)', which does not exist" } ?? "no such file")
        }
        let host = "this shutterpipe \(ShutterPipeSDK.version) has contract \(ShutterPipeSDK.contract) with \(ShutterPipeSDK.toolchain)"
        guard let handle = dlopen(absolute, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown error"
            // A Swift symbol of the contract that is not there: a plugin built against
            // another contract (one from before 9 needs symbols 9 no longer has). Said in
            // words; the mangled name goes last, for the curious.
            if let range = reason.range(of: "undefined symbol: $s14ShutterPipeKit") {
                let symbol = reason[range.lowerBound...].dropFirst("undefined symbol: ".count).prefix { !$0.isWhitespace }
                throw PluginLoadError(path: path, reason: "built against another plugin contract than this shutterpipe's: it needs a part of ShutterPipeKit that \(host) does not have (a plugin from before contract 9, or one built against a changed SDK); rebuild the plugin against this shutterpipe's SDK (the missing part: \(symbol))")
            }
            throw PluginLoadError(path: path, reason: "cannot load it: \(reason)")
        }
        guard let abiSymbol = dlsym(handle, "shutterpipe_plugin_abi"), let entrySymbol = dlsym(handle, "shutterpipe_plugin_entry") else {
            if skippingNonPlugins { return false }
            throw PluginLoadError(path: path, reason: "not a shutterpipe plugin: it exports no shutterpipe_plugin_abi/shutterpipe_plugin_entry (see docs/plugins.md)")
        }
        guard let contractSymbol = dlsym(handle, "shutterpipe_plugin_contract") else {
            // Before contract 9 a plugin exported only the ABI number, matched exactly.
            let pluginABI = unsafeBitCast(abiSymbol, to: (@convention(c) () -> Int32).self)()
            if pluginABI >= 9 {
                throw PluginLoadError(path: path, reason: "it says plugin ABI \(pluginABI) but exports no shutterpipe_plugin_contract, the entry point every plugin since contract 9 has: its entry points were written by hand, not with the SDK's PluginEntry (docs/plugins.md, \"The entry point\"); \(host): rebuild the plugin against this shutterpipe's SDK")
            }
            throw PluginLoadError(path: path, reason: "built against plugin ABI \(pluginABI), before contract 9 (it exports no shutterpipe_plugin_contract), but \(host); rebuild the plugin against this shutterpipe's SDK")
        }
        let (contract, toolchain) = PluginEntry.unpack(unsafeBitCast(contractSymbol, to: (@convention(c) () -> Int64).self)())
        let plugin = "built against contract \(contract) with \(toolchain)"
        guard ShutterPipeSDK.contract.loads(contract) else {
            let fix = contract.major == ShutterPipeSDK.contract.major && contract.minor > ShutterPipeSDK.contract.minor
                ? "upgrade shutterpipe to one with contract \(contract) or later, or rebuild the plugin against this shutterpipe's SDK"
                : "rebuild the plugin against this shutterpipe's SDK"
            throw PluginLoadError(path: path, reason: "\(plugin), but \(host); \(fix)")
        }
        guard toolchain == ShutterPipeSDK.toolchain else {
            throw PluginLoadError(path: path, reason: "\(plugin), but \(host); Swift has no stable ABI across compilers on Linux: rebuild the plugin with \(ShutterPipeSDK.toolchain)")
        }
        typealias EntryFunction = @convention(c) (UnsafeMutableRawPointer) -> Int32
        var error = [UInt8](repeating: 0, count: 1024)
        let result: Int32 = error.withUnsafeMutableBufferPointer { buffer in
            var context: [UInt64] = [UInt64(ShutterPipeSDK.contract.major), ShutterPipeSDK.coreIdentity,
                                     UInt64(UInt(bitPattern: Unmanaged.passUnretained(registry).toOpaque())),
                                     UInt64(UInt(bitPattern: buffer.baseAddress)), UInt64(buffer.count), UInt64(ShutterPipeSDK.contract.minor)]
            var code: Int32 = 0
            do {
                try registry.registering(from: .library(absolute)) {
                    code = context.withUnsafeMutableBytes { unsafeBitCast(entrySymbol, to: EntryFunction.self)($0.baseAddress!) }
                    if code != PluginEntry.registered { throw PluginLoadError(path: path, reason: "") }
                }
            } catch {}
            return code
        }
        guard result == PluginEntry.registered else {
            let message = String(decoding: error.prefix { $0 != 0 }, as: UTF8.self)
            throw PluginLoadError(path: path, reason: message.isEmpty ? "its entry point failed (code \(result))" : message)
        }
        return true
    }
}
