#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit

/// Why a plugin library was refused.
public struct PluginLoadError: Error, Sendable, CustomStringConvertible {
    /// The library.
    public var path: String
    /// Why.
    public var reason: String
    public var description: String { "plugin '\(path)' refused: \(reason)" }
}

/// Loads third-party plugin libraries: `dlopen`, the ABI check, the entry point. A
/// library is never unloaded (Swift code cannot be unloaded safely).
public enum PluginLoader {
    /// The environment variable with plugin paths, separated by `:`.
    public static let environmentVariable = "SHUTTERPIPE_PLUGIN_PATH"

    /// The plugin paths from the environment.
    public static func environmentPaths(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        (environment[environmentVariable] ?? "").split(separator: ":").map(String.init).filter { !$0.isEmpty }
    }

    /// The libraries `paths` name: files as they are; folders, every `lib*.so` in them.
    public static func libraries(in paths: [String]) -> [String] {
        paths.flatMap { path -> [String] in
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return [path] }
            return ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
                .filter { $0.hasPrefix("lib") && $0.hasSuffix(".so") }.sorted().map { "\(path)/\($0)" }
        }
    }

    /// Loads every library into `registry`. Returns the refusals; none of them stops the
    /// others, and none crashes.
    public static func load(_ paths: [String], into registry: PluginRegistry) -> [PluginLoadError] {
        libraries(in: paths).compactMap { path -> PluginLoadError? in
            do throws(PluginLoadError) { try load(path, into: registry); return nil } catch { return error }
        }
    }

    /// Loads one library.
    public static func load(_ path: String, into registry: PluginRegistry) throws(PluginLoadError) {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        guard FileManager.default.fileExists(atPath: absolute) else {
            throw PluginLoadError(path: path, reason: "no such file")
        }
        guard let handle = dlopen(absolute, RTLD_NOW | RTLD_LOCAL) else {
            throw PluginLoadError(path: path, reason: "cannot load it: \(dlerror().map { String(cString: $0) } ?? "unknown error")")
        }
        guard let abiSymbol = dlsym(handle, "shutterpipe_plugin_abi"), let entrySymbol = dlsym(handle, "shutterpipe_plugin_entry") else {
            throw PluginLoadError(path: path, reason: "not a shutterpipe plugin: it exports no shutterpipe_plugin_abi/shutterpipe_plugin_entry (see docs/plugins.md)")
        }
        typealias ABIFunction = @convention(c) () -> Int32
        typealias EntryFunction = @convention(c) (UnsafeMutableRawPointer) -> Int32
        let pluginABI = unsafeBitCast(abiSymbol, to: ABIFunction.self)()
        guard Int64(pluginABI) == Int64(ShutterPipeSDK.abi) else {
            throw PluginLoadError(path: path, reason: "built against plugin ABI \(pluginABI), but this shutterpipe \(ShutterPipeSDK.version) has ABI \(ShutterPipeSDK.abi); rebuild the plugin against this shutterpipe's SDK")
        }
        var error = [UInt8](repeating: 0, count: 1024)
        let result: Int32 = error.withUnsafeMutableBufferPointer { buffer in
            var context: [UInt64] = [UInt64(ShutterPipeSDK.abi), ShutterPipeSDK.coreIdentity,
                                     UInt64(UInt(bitPattern: Unmanaged.passUnretained(registry).toOpaque())),
                                     UInt64(UInt(bitPattern: buffer.baseAddress)), UInt64(buffer.count)]
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
    }
}
