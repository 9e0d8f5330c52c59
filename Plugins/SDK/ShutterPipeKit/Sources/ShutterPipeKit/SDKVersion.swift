/// The version of the plugin SDK and of the contract between shutterpipe and its plugins.
///
/// ## How the contract evolves
/// This module, ShutterPipeKit, is the contract, and it is compiled with library
/// evolution (`-enable-library-evolution`): its structs, classes and non-frozen enums are
/// resilient, and a protocol's witness tables are filled at run time. So additive changes
/// keep every plugin built against an older minor revision loading:
/// - a new protocol requirement *with a default implementation* (the old plugin's
///   conformance gets the default),
/// - a new stored property of a struct, a new case of a non-`@frozen` enum, a new type,
/// - a new ability (``PluginAbility``): a new protocol a plugin may adopt and declare.
///
/// Each such change raises ``ContractVersion/minor``. Anything else (a requirement
/// without a default, a removed or renamed symbol, a changed type, a case added to a
/// `@frozen` enum) raises ``ContractVersion/major``, and every plugin must be rebuilt.
/// The host loads a plugin when the majors are equal, the plugin's minor is not newer
/// than the host's, and both were built with the same Swift compiler (major.minor): on
/// Linux neither the Swift runtime nor Foundation is ABI-stable across compilers, and
/// Foundation is not built with library evolution, so the contract's `Date` and `Data`
/// are only stable under one compiler.
///
/// Not covered: ShutterPipeSupport (helpers; each plugin links its own copy, and none of
/// its types crosses between a plugin and the host) and the test kits. The runtime (the
/// coordinator) is the host's, outside the SDK. Tuning them never forces a plugin to be
/// rebuilt.
///
/// The one place to change the numbers is ``PluginEntry``.
public enum ShutterPipeSDK {
    /// The release version of shutterpipe and its SDK.
    public static let version = "0.1.0"
    /// The contract's major revision: plugins of another major are refused. It continues
    /// the old exact-match "ABI" numbers (8 was the last of those).
    public static let abi = Int(PluginEntry.abi)
    /// The contract revision of this build.
    public static let contract = ContractVersion(major: PluginEntry.abi, minor: PluginEntry.contractMinor)
    /// The Swift compiler this build was made with.
    public static let toolchain = SwiftToolchain(packed: PluginEntry.toolchain)
}

/// A contract revision: major.minor.
@frozen
public struct ContractVersion: Sendable, Equatable, Comparable, CustomStringConvertible {
    public var major: Int32
    public var minor: Int32

    public init(major: Int32, minor: Int32) {
        self.major = major
        self.minor = minor
    }

    public var description: String { "\(major).\(minor)" }

    public static func < (a: ContractVersion, b: ContractVersion) -> Bool { (a.major, a.minor) < (b.major, b.minor) }

    /// Whether a host at this revision can load a plugin built against `plugin`.
    public func loads(_ plugin: ContractVersion) -> Bool {
        plugin.major == major && plugin.minor <= minor
    }
}

/// The Swift compiler a binary was built with, major.minor.
@frozen
public struct SwiftToolchain: Sendable, Equatable, CustomStringConvertible {
    public var major: Int32
    public var minor: Int32

    /// From `major * 100 + minor`, the shape the handshake carries.
    public init(packed: Int32) {
        major = packed / 100
        minor = packed % 100
    }

    public var packed: Int32 { major * 100 + minor }
    public var description: String { "Swift \(major).\(minor)" }
}
