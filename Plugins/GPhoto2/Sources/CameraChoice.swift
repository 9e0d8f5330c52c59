import ShutterPipeKit

/// Which camera a command opens: the one at `--port`, the model given, the serial given,
/// or the first detected. Declared once for `camera settings` and `calibrate focus`
/// (an `@OptionGroup`), with the worker that opens it.
struct CameraChoice: ParsableArguments {
    @Option(valueName: "PORT", help: "the camera's libgphoto2 port (usb:001,004, ptpip:HOST:PORT:PORT)")
    var port: String?

    @Option(valueName: "MODEL", help: "the camera's model, as `shutterpipe cameras` shows it")
    var model: String?

    @Option(valueName: "SERIAL", help: "the camera's serial number")
    var serial: String?

    /// The camera as a worker's `open` request names it.
    var selection: CameraSelection { CameraSelection(name: "camera", model: model, port: port, serial: serial) }

    /// A worker for a command of its own (no session's log), confined to the camera's
    /// network port when it is one.
    func worker(named name: String) -> CameraWorker {
        CameraWorker(name: name, settingsFolder: GPhoto2Backend.defaultSettingsFolder, log: .discarding,
                     confinement: WorkerConfinement(tcpPorts: WorkerConfinement.tcpPorts(of: port)))
    }
}
