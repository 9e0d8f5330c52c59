import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// `shutterpipe cameras`: the cameras libgphoto2 sees, each opened briefly, through a
/// camera worker (this process loads no camera driver).
struct CamerasCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cameras", abstract: "list the cameras libgphoto2 detects, with port, serial, battery, card space",
        discussion: """
        Lists the cameras libgphoto2 detects on USB, and the ones at the given ports (network
        cameras, such as ptpip:127.0.0.1:15740:15740, are not detected by themselves): model,
        port, serial number, battery and free card space, where the camera reports them. Each
        camera is opened briefly; a camera held by another program says so, with the fix.
        """)

    @Option(valueName: "PORT", help: "also open the camera at this libgphoto2 port (ptpip:HOST:PORT:PORT)")
    var port: [String] = []

    func run(_ context: CommandContext) async throws -> Int32 {
        let worker = CameraWorker(name: "list", settingsFolder: GPhoto2Backend.defaultSettingsFolder, log: .discarding,
                                  confinement: WorkerConfinement(tcpPorts: Array(Set(port.flatMap(WorkerConfinement.tcpPorts(of:)))).sorted()))
        let reply: WorkerReply
        do {
            reply = try await worker.request(.list(ports: port))
            await worker.stop()
        } catch {
            await worker.stop()
            context.errors.printLine("shutterpipe cameras: \(error)")
            return CommandContext.failure
        }
        guard case .cameras(let cameras, let problem) = reply else { return CommandContext.failure }
        if let problem { context.errors.printLine("shutterpipe cameras: \(problem)") }
        guard !cameras.isEmpty else {
            context.output.printLine("No camera detected. Connect one by USB, switch it on and to PTP mode; for a network camera, pass --port ptpip:HOST:PORT:PORT.")
            return CommandContext.success
        }
        let header = ["MODEL", "PORT", "SERIAL", "BATTERY", "CARD FREE"]
        let rows = cameras.map { camera in
            [camera.model, camera.port, camera.serial ?? "-", camera.battery ?? "-", camera.freeCardBytes.map(formatByteCount) ?? "-"]
        }
        for line in formatColumns([header] + rows) { context.output.printLine(line) }
        for camera in cameras {
            if let problem = camera.problem { context.output.printLine("\(camera.port): \(problem)") }
        }
        return CommandContext.success
    }
}
