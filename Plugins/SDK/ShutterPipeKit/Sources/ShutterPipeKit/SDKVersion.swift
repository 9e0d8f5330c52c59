/// The version of the plugin SDK.
///
/// ## What the ABI covers
/// The plugin ABI is this module, ShutterPipeKit, and nothing else: the types a plugin
/// and the host hand each other (the three protocols, events, states, answers, causes,
/// errors, photos, receipts, config nodes, options, the registry, commands, logging,
/// the console and the exit clean-up list). ``abi`` changes whenever one of them changes its layout or a protocol
/// its requirements: a new requirement, even with a default, changes the witness tables
/// a plugin was compiled against. A runtime-loaded plugin built against another ``abi``
/// is refused before any of its code runs.
///
/// Not covered: ShutterPipeSupport (helpers; each plugin links its own copy, and none of
/// its types crosses between a plugin and the host), ShutterPipeRuntime (the
/// coordinator; the host's alone, never linked by a plugin), and the test kits. Tuning
/// them never forces a plugin to be rebuilt.
///
/// The one place to change the number is ``PluginEntry/abi``.
public enum ShutterPipeSDK {
    /// The release version of shutterpipe and its SDK.
    public static let version = "0.1.0"
    /// The plugin ABI revision of this build.
    public static let abi = Int(PluginEntry.abi)
}
