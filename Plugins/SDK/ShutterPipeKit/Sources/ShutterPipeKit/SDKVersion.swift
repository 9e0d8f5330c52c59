/// The version of the plugin SDK.
///
/// ``abi`` changes whenever a public type's layout or a protocol's requirements change
/// (a new requirement, even with a default, changes the witness tables a plugin was
/// compiled against); a runtime-loaded plugin built against another ``abi`` is refused.
/// The one place to change it is ``PluginEntry/abi``.
public enum ShutterPipeSDK {
    /// The release version of shutterpipe and its SDK.
    public static let version = "0.1.0"
    /// The plugin ABI revision of this build.
    public static let abi = Int(PluginEntry.abi)
}
