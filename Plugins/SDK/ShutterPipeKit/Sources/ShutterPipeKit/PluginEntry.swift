/// The C-ABI handshake between shutterpipe and a plugin library.
///
/// A plugin library exports two C functions, written with `@_cdecl`:
///
/// ```swift
/// @_cdecl("shutterpipe_plugin_abi")
/// public func shutterpipePluginABI() -> Int32 { PluginEntry.abi }
///
/// @_cdecl("shutterpipe_plugin_entry")
/// public func shutterpipePluginEntry(_ context: UnsafeMutableRawPointer) -> Int32 {
///     PluginEntry.register(context) { registry in
///         try ManifestSink.register(in: registry)
///     }
/// }
/// ```
///
/// shutterpipe calls `shutterpipe_plugin_abi` first and refuses a library built against
/// another ABI. Then it calls `shutterpipe_plugin_entry` with a context of plain integers
/// (never a Swift type, so reading it is safe whatever the plugin was built with). The
/// code that reads it is compiled into the plugin, so it also notices a plugin that
/// carries its own copy of ShutterPipeKit, which would make every type exist twice, and
/// refuses before touching anything of the host's.
public enum PluginEntry {
    /// The ABI revision the plugin was built against, compiled into the plugin. Revision
    /// history: 1, the first; 2, `PhotoSink.begin()`, `observe(_:)` and `end()`; 3, the
    /// contract alone (helpers and the coordinator left the library), `PhotoSink.role`,
    /// `StoredFile.cameraFile`, commands in the registry, several cameras per backend
    /// (`CapturedFile.camera`, `CapturedPhoto.missing`, `status()` per camera); 4,
    /// `CaptureBackend.capture(at:)`, `TriggerEvent.fireAt`, `ShutterAnswer.captureTime`;
    /// 5, camera settings during a session (`CameraSettingsControl`, settings requests on
    /// `EventChannel`), download progress (`BackendContext.report(_:)`), and every config
    /// mistake in one pass (`PluginOptions` records them; `ConfigErrors` is in the contract);
    /// 6, the shot identity and the catalogue (`ShotID`, `ShotCatalogue`); 7, the
    /// catalogue's paging and change reports; 8, session labels (`EventChannel.send(_: LabelRequest)`, `ShotContext.label`,
    /// `ShutterAnswer.label`), `CapturedFile.cameraSerial`, `CapturedPhoto.origin`,
    /// `PhotoSink.statusNote()`, the catalogue's session labels.
    @_alwaysEmitIntoClient
    public static var abi: Int32 { 8 }

    /// `shutterpipe_plugin_entry` registered the plugin's types.
    public static let registered: Int32 = 0
    /// The plugin was built against another ABI.
    public static let abiMismatch: Int32 = 1
    /// The plugin carries its own copy of ShutterPipeKit.
    public static let foreignCore: Int32 = 2
    /// The plugin's registration threw (a duplicate type, say); the message says why.
    public static let registrationFailed: Int32 = 3

    /// Context layout, 8-byte words: host ABI, host core identity, registry pointer, error
    /// buffer pointer, error buffer length.
    public static let contextWords = 5

    /// Reads the context, checks ABI and core, and runs `body` with the host's registry.
    /// Failures are written into the context's error buffer and returned as a code.
    @_alwaysEmitIntoClient
    public static func register(_ context: UnsafeMutableRawPointer, _ body: (PluginRegistry) throws -> Void) -> Int32 {
        let hostABI = context.load(fromByteOffset: 0, as: Int64.self)
        let hostCore = context.load(fromByteOffset: 8, as: UInt64.self)
        func fail(_ code: Int32, _ message: String) -> Int32 {
            guard let buffer = UnsafeMutablePointer<UInt8>(bitPattern: UInt(context.load(fromByteOffset: 24, as: UInt64.self))) else { return code }
            let capacity = Int(context.load(fromByteOffset: 32, as: UInt64.self))
            let bytes = Array(message.utf8.prefix(max(0, capacity - 1)))
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
            buffer[bytes.count] = 0
            return code
        }
        guard hostABI == Int64(abi) else {
            return fail(abiMismatch, "built against plugin ABI \(abi), but this shutterpipe has ABI \(hostABI); rebuild the plugin against its SDK")
        }
        guard hostCore == ShutterPipeSDK.coreIdentity else {
            return fail(foreignCore, "carries its own copy of ShutterPipeKit; link the SDK's dynamic ShutterPipeKit product, never its target, and do not link it statically")
        }
        guard let registryPointer = UnsafeRawPointer(bitPattern: UInt(context.load(fromByteOffset: 16, as: UInt64.self))) else {
            return fail(registrationFailed, "no registry given")
        }
        let registry = Unmanaged<PluginRegistry>.fromOpaque(registryPointer).takeUnretainedValue()
        do {
            try body(registry)
            return registered
        } catch {
            return fail(registrationFailed, "\(error)")
        }
    }
}

extension ShutterPipeSDK {
    /// Where this copy of ShutterPipeKit is in memory: the same for the host and every
    /// plugin sharing its library, different for a plugin with a copy of its own.
    public static var coreIdentity: UInt64 {
        UInt64(UInt(bitPattern: ObjectIdentifier(PluginRegistry.self).hashValue))
    }
}
