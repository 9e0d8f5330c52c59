import ShutterPipeKit

// The three C functions shutterpipe looks for when it loads this library.

@_cdecl("shutterpipe_plugin_abi")
public func shutterpipePluginABI() -> Int32 { PluginEntry.abi }

@_cdecl("shutterpipe_plugin_contract")
public func shutterpipePluginContract() -> Int64 { PluginEntry.handshake }

@_cdecl("shutterpipe_plugin_entry")
public func shutterpipePluginEntry(_ context: UnsafeMutableRawPointer) -> Int32 {
    PluginEntry.register(context) { registry in
        try FifoTrigger.register(in: registry)
    }
}
