/// The C-ABI handshake between shutterpipe and a plugin library.
///
/// A plugin library exports three C functions, written with `@_cdecl`:
///
/// ```swift
/// @_cdecl("shutterpipe_plugin_abi")
/// public func shutterpipePluginABI() -> Int32 { PluginEntry.abi }
///
/// @_cdecl("shutterpipe_plugin_contract")
/// public func shutterpipePluginContract() -> Int64 { PluginEntry.handshake }
///
/// @_cdecl("shutterpipe_plugin_entry")
/// public func shutterpipePluginEntry(_ context: UnsafeMutableRawPointer) -> Int32 {
///     PluginEntry.register(context) { registry in
///         try ManifestSink.register(in: registry)
///     }
/// }
/// ```
///
/// shutterpipe reads `shutterpipe_plugin_contract` first (the contract revision
/// major.minor and the Swift compiler the plugin was built with, all compiled into the
/// plugin) and refuses, in one line naming both sides, a plugin it cannot load (see
/// ``ShutterPipeSDK`` for the rules). `shutterpipe_plugin_abi` is the major alone: what
/// shutterpipe before contract 9 read, so an old host refuses a new plugin cleanly too.
/// Then it calls `shutterpipe_plugin_entry` with a context of plain integers (never a
/// Swift type, so reading it is safe whatever the plugin was built with). The code that
/// reads it is compiled into the plugin, so it also notices a plugin that carries its own
/// copy of ShutterPipeKit, which would make every type exist twice, and refuses before
/// touching anything of the host's.
public enum PluginEntry {
    /// The contract's major revision the plugin was built against, compiled into the
    /// plugin. Before 9 this was an exact-match "ABI" number; its history: 1, the first;
    /// 2, `PhotoSink.begin()`, `observe(_:)` and `end()`; 3, the contract alone,
    /// `PhotoSink.role`, `StoredFile.cameraFile`, commands in the registry, several cameras
    /// per backend; 4, `CaptureBackend.capture(at:)`, `TriggerEvent.fireAt`,
    /// `ShutterAnswer.captureTime`; 5, camera settings during a session, download
    /// progress, every config mistake in one pass; 6, the shot identity and the
    /// catalogue; 7, the catalogue's paging and change reports; 8, session labels,
    /// `CapturedFile.cameraSerial`, `CapturedPhoto.origin`, `PhotoSink.statusNote()`;
    /// 9, the contract evolves: library evolution, minor revisions, the toolchain in the
    /// handshake, declared abilities (its minors: 1, ask and answer; 2, the shots in flight;
    /// 3, a sink's digest; 4, first pixels; 5, plugins answer for themselves; 6, a shot's
    /// place in a sequence; 7, a backend's late preview, ``SessionObserver/previewed(_:shot:)``);
    /// 10, enums that grow are not `@frozen` (``ShutterEvent``, ``ShutterState``,
    /// ``CameraSetting/Kind``, ``SettingsRequest/Action``, ``PluginKind``, ``SinkRole``,
    /// ``ShotMarkChange``, ``LogLevel``, ``ArgumentDefinition/Kind``): a new event or
    /// setting kind is a minor revision from now on, and plugins switch with
    /// `@unknown default`.
    @_alwaysEmitIntoClient
    public static var abi: Int32 { 10 }

    /// The contract's minor revision the plugin was built against: additive changes since
    /// the major. History of 10: 0, the first; 1, bulb: a backend holds the shutter open
    /// for a time it is given (``BulbCapture``, ``PluginAbility/bulbCapture``); 2, options
    /// declared once for several commands (``OptionGroup``, ``ParsableArguments``); 3, the
    /// EXIF summary a sink read from the bytes it wrote (``StoredFile/exif``), and a
    /// backend's word that a file's preview follows (``CapturedFile/previewFollows``).
    @_alwaysEmitIntoClient
    public static var contractMinor: Int32 { 3 }

    /// The Swift compiler the plugin was built with, `major * 100 + minor`.
    @_alwaysEmitIntoClient
    public static var toolchain: Int32 {
        #if compiler(>=7.0)
        return 700
        #elseif compiler(>=6.5)
        return 605
        #elseif compiler(>=6.4)
        return 604
        #elseif compiler(>=6.3)
        return 603
        #elseif compiler(>=6.2)
        return 602
        #elseif compiler(>=6.1)
        return 601
        #else
        return 600
        #endif
    }

    /// What `shutterpipe_plugin_contract` returns: major, minor and toolchain packed in
    /// one integer (16 bits each, low to high: toolchain, minor, major).
    @_alwaysEmitIntoClient
    public static var handshake: Int64 { pack(major: abi, minor: contractMinor, toolchain: toolchain) }

    /// Packs a handshake.
    @_alwaysEmitIntoClient
    public static func pack(major: Int32, minor: Int32, toolchain: Int32) -> Int64 {
        (Int64(major) << 32) | (Int64(minor) << 16) | Int64(toolchain)
    }

    /// Unpacks a handshake.
    public static func unpack(_ handshake: Int64) -> (contract: ContractVersion, toolchain: SwiftToolchain) {
        (ContractVersion(major: Int32(truncatingIfNeeded: handshake >> 32), minor: Int32(truncatingIfNeeded: (handshake >> 16) & 0xFFFF)),
         SwiftToolchain(packed: Int32(truncatingIfNeeded: handshake & 0xFFFF)))
    }

    /// `shutterpipe_plugin_entry` registered the plugin's types.
    public static let registered: Int32 = 0
    /// The plugin was built against another ABI.
    public static let abiMismatch: Int32 = 1
    /// The plugin carries its own copy of ShutterPipeKit.
    public static let foreignCore: Int32 = 2
    /// The plugin's registration threw (a duplicate type, say); the message says why.
    public static let registrationFailed: Int32 = 3

    /// Context layout, 8-byte words: host major, host core identity, registry pointer,
    /// error buffer pointer, error buffer length, host minor. Words are only ever added at
    /// the end: a plugin built against an older minor reads the ones it knows.
    public static let contextWords = 6

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
        let hostMinor = context.load(fromByteOffset: 40, as: Int64.self)
        guard hostABI == Int64(abi), hostMinor >= Int64(contractMinor) else {
            return fail(abiMismatch, "built against contract \(abi).\(contractMinor), but this shutterpipe has contract \(hostABI).\(hostMinor); rebuild the plugin against its SDK")
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
