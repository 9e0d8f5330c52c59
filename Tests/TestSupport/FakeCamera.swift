#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeSupport

/// A running `shutterpipe-fakecam` on a port of its own, with a HOME of its own for
/// libgphoto2's settings file, so tests never cross-talk. Stopped when released.
public final class FakeCamera: Sendable {
    /// The TCP port it listens on.
    public let port: UInt16
    /// The HOME that tests give libgphoto2 (shutterpipe and gphoto2) for this camera.
    public let home: TemporaryDirectory
    /// The options it was started with.
    public let arguments: [String]
    private let process: ChildProcess
    private let log: String

    /// Starts a virtual camera with `arguments` (see `shutterpipe-fakecam --help`) on a
    /// free port, or on `port`, and waits until it listens.
    public init(_ arguments: [String] = [], port: UInt16? = nil, home: TemporaryDirectory? = nil) async throws {
        ignoreSIGPIPE()
        let home = home ?? TemporaryDirectory("camera-home")
        self.home = home
        self.arguments = arguments
        let ready = home.file("ready-\(UUID().uuidString)")
        log = home.file("fakecam-\(UUID().uuidString).log")
        try? Data().write(to: URL(fileURLWithPath: log))  // not createFile: on Linux it writes through a TemporaryDirectory.* in /tmp that it never removes
        process = try ChildProcess([try builtExecutable("shutterpipe-fakecam"), "--port", String(port ?? 0), "--ready-file", ready] + arguments,
                                   error: .file(log))
        let deadline = ContinuousClock.now + .seconds(10)
        while !FileManager.default.fileExists(atPath: ready) {
            guard ContinuousClock.now < deadline, process.isRunning else {
                throw TestSupportError("the virtual camera did not start: \(String(decoding: FileManager.default.contents(atPath: log) ?? Data(), as: UTF8.self))")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        let text = try String(contentsOfFile: ready, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let chosen = UInt16(text) else { throw TestSupportError("bad ready file: '\(text)'") }
        self.port = chosen
    }

    deinit { stop() }

    /// The libgphoto2 port of this camera.
    public var portSpec: String { "ptpip:127.0.0.1:\(port):\(port)" }

    /// What the camera logged.
    public var logText: String { String(decoding: FileManager.default.contents(atPath: log) ?? Data(), as: UTF8.self) }

    /// Presses the camera's own shutter button.
    public func pressButton() { process.signal(SIGUSR1) }

    /// Stops the camera (like pulling the cable).
    public func stop() {
        guard process.isRunning else { return }
        process.signal(SIGKILL)
        process.waitUntilExit()
    }

    /// Runs the gphoto2 CLI against this camera, under a deadline.
    public func gphoto2(_ arguments: [String]) async throws -> ProgramOutput {
        try await runProgram(["timeout", "-k", "2", "20", "gphoto2", "--port", portSpec, "--camera", "PTP/IP Camera"] + arguments,
                             environment: ["HOME": home.path])
    }

    /// The names of the files on the camera's card.
    public func filesOnCard() async throws -> [String] {
        let listing = try await gphoto2(["--list-files"]).text
        return listing.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("#") else { return nil }
            return line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.map(String.init)
        }
    }
}
