/// The version of the plugin SDK.
///
/// ``abi`` changes whenever a public type's layout or a protocol's requirements change;
/// a runtime-loaded plugin built against another ``abi`` is refused.
public enum ShutterPipeSDK {
    /// The release version of shutterpipe and its SDK.
    public static let version = "0.1.0"
    /// The plugin ABI revision.
    public static let abi = 1
}
