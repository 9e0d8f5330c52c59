import ShutterPipeKit

extension GPhoto2Backend.Options {
    /// Reads the options of a `gphoto2` backend.
    public init(_ options: PluginOptions) throws {
        self.init()
        model = try options.string("model")
        port = try options.string("port")
        serial = try options.string("serial")
        if let port, !(port.hasPrefix("usb:") || port.hasPrefix("ptpip:") || port.hasPrefix("serial:") || port.hasPrefix("ip:")) {
            throw options.error("'port' must look like usb:001,004 or ptpip:127.0.0.1:15740:15740; got '\(port)'", key: "port")
        }
        for (key, value, _) in try options.stringMap("settings") { settings[key] = value }
        keepOnCamera = try options.bool("keepOnCamera", default: keepOnCamera)
        eventPollInterval = try options.duration("eventPollInterval", default: eventPollInterval)
        reconnectBackoffLimit = try options.duration("reconnectBackoffLimit", default: reconnectBackoffLimit)
    }
}
