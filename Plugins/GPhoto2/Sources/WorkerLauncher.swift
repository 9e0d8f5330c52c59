#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// How a camera's worker process is made: the executable found, the camera's settings
/// folder prepared as its HOME (given to the worker's user when it switches to one), the
/// process started with its channel and its confinement, its standard error forwarded.
/// ``CameraWorker`` decides when; this knows how.
struct WorkerLauncher: Sendable {
    /// The camera's name in the pipeline.
    let camera: String
    /// The camera's own settings folder, the worker's HOME.
    let home: String
    let log: Logger
    /// libgphoto2's own error messages go into the log (``GPhoto2Backend/Options/libgphoto2Log``).
    let forwardsLibraryLog: Bool
    let confinement: WorkerConfinement
    /// The user the worker switches to when the session is root (nil: ``WorkerUser/defaultName``).
    let userName: String?
    /// The worker program; nil: ``executable()``.
    var program: String? = nil

    /// Starts a worker process: its end of the message channel is its only extra
    /// descriptor, its standard error goes to the session's log at debug level.
    func launch() throws(ShutterError) -> (ChildProcess, MessageChannel) {
        let executable: String
        if let program { executable = program } else { executable = try Self.executable() }
        var confinement = self.confinement
        if confinement.enabled { confinement.user = try WorkerUser.resolve(userName) }
        try prepareHome(owner: confinement.user)
        do {
            let (ours, theirs) = try MessageChannel.pair()
            var environment = ProcessInfo.processInfo.environment
            environment["HOME"] = home
            // A crash is to end the worker at once and be answered: not seconds of the
            // Swift runtime's backtrace first (which also catches a SIGSEGV sent by kill).
            environment["SWIFT_BACKTRACE"] = "enable=no"
            environment[WorkerProtocol.libraryLogVariable] = forwardsLibraryLog ? "1" : nil
            environment[WorkerConfinement.variable] = confinement.encoded
            let child = try ChildProcess([executable], environment: environment, input: .null, output: .null, error: .pipe,
                                         passing: [theirs.descriptor])
            if let errors = child.errorOutput {
                let name = camera, log = self.log
                OwnedThread.start("shutterpipe worker \(name) stderr") {
                    LineReader.forEachLine(in: errors) { line in
                        // libgphoto2 prints its own complaints there ("connect cmd: Connection
                        // refused" on every reconnection attempt): detail, at debug level;
                        // what matters reaches the answers and the outage messages.
                        log.debug("camera worker '\(name)': \(String(decoding: line, as: UTF8.self))", [("camera", name), ("source", "worker")])
                        return true
                    }
                }
            }
            return (child, ours)
        } catch {
            throw ShutterError(.cameraFailure, "cannot start the camera worker for '\(camera)': \(error)")
        }
    }

    /// The worker executable: `$SHUTTERPIPE_CAMERA_WORKER`, else
    /// `shutterpipe-camera-worker` next to the running executable.
    static func executable() throws(ShutterError) -> String {
        if let path = ProcessInfo.processInfo.environment["SHUTTERPIPE_CAMERA_WORKER"], !path.isEmpty {
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw ShutterError(.cameraFailure, "SHUTTERPIPE_CAMERA_WORKER is '\(path)', which is not an executable file",
                                   fix: "point it at shutterpipe-camera-worker, or unset it to use the one next to shutterpipe")
            }
            return path
        }
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let candidate = URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent("shutterpipe-camera-worker").path
        guard FileManager.default.isExecutableFile(atPath: candidate) else {
            throw ShutterError(.cameraFailure, "the camera worker is missing: no \(candidate)",
                               fix: "build it with `swift build` (it builds shutterpipe-camera-worker next to shutterpipe), install it there, or set SHUTTERPIPE_CAMERA_WORKER")
        }
        return candidate
    }

    /// The camera's own settings folder, as the worker's HOME; the first time, it starts
    /// from the user's `~/.gphoto/settings`, so a PTP/IP camera paired with this computer
    /// sees the same GUID.
    /// A worker that switches to `owner` gets its folder (and nothing above it) as its own.
    private func prepareHome(owner: WorkerConfinement.User?) throws(ShutterError) {
        let settings = "\(home)/.gphoto"
        do {
            try FileManager.default.createDirectory(atPath: settings, withIntermediateDirectories: true)
            let user = PluginOptions.expandingTilde("~/.gphoto/settings")
            if !FileManager.default.fileExists(atPath: "\(settings)/settings"), FileManager.default.fileExists(atPath: user) {
                try FileManager.default.copyItem(atPath: user, toPath: "\(settings)/settings")
            }
            if let owner {
                let entries = (FileManager.default.enumerator(atPath: home)?.allObjects as? [String]) ?? []
                for path in [home] + entries.map({ "\(home)/\($0)" }) where lchown(path, owner.uid, owner.gid) != 0 {
                    throw SystemError("give \(path) to \(owner.name)")
                }
            }
        } catch {
            throw ShutterError(.storageUnavailable, "cannot make the camera settings folder '\(home)': \(error.localizedDescription)",
                               fix: "make the folder writable, or set 'settingsFolder'")
        }
    }
}
