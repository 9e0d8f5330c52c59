import CommandSink
import EvdevTrigger
import FileStubBackend
import FilesSink
import GPhoto2Backend
import HotFolderBackend
import MPRISTrigger
import MQTTTrigger
import ShutterPipeKit
import SocketTrigger
import StdinTrigger
import UploadSink
import WebTrigger

/// The plugins that ship with shutterpipe. Each registers itself through the same
/// public SDK calls a third-party plugin uses.
public enum BuiltInPlugins {
    /// A registry holding every built-in plugin type.
    public static func registry() -> PluginRegistry {
        let registry = PluginRegistry()
        do {
            try FileStubBackend.register(in: registry)
            try StdinTrigger.register(in: registry)
            try SocketTrigger.register(in: registry)
            try EvdevTrigger.register(in: registry)
            try MPRISTrigger.register(in: registry)
            try FilesSink.register(in: registry)
            try CommandSink.register(in: registry)
            try GPhoto2Backend.register(in: registry)
            try WebTrigger.register(in: registry)
            try MQTTTrigger.register(in: registry)
            try UploadSink.register(in: registry)
            try HotFolderBackend.register(in: registry)
        } catch {
            preconditionFailure("built-in plugin types clash: \(error)")
        }
        return registry
    }
}
