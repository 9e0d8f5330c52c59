#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeSupport
import Testing

/// A running `shutterpipe-fakecam` on a port of its own, with a HOME of its own for
/// libgphoto2's settings file, so tests never cross-talk. Stopped when released.
public final class FakeCamera: Sendable {
    /// The TCP port it listens on.
    public let port: UInt16
    /// The HOME that tests give libgphoto2 (shutterpipe and gphoto2) for this camera.
    public let home: TemporaryDirectory
    /// The options it was started with.
    public let arguments: [String]
    private let process: RunningProcess

    /// Starts a virtual camera with `arguments` (see `shutterpipe-fakecam --help`) on a
    /// free port, or on `port`, and waits until it listens.
    public init(_ arguments: [String] = [], port: UInt16? = nil, home: TemporaryDirectory? = nil) async throws {
        ignoreSIGPIPE()
        let home = home ?? TemporaryDirectory("camera-home")
        self.home = home
        self.arguments = arguments
        let ready = home.file("ready-\(UUID().uuidString)")
        process = try await RunningProcess.start(program: try builtExecutable("shutterpipe-fakecam"), ["--port", String(port ?? 0), "--ready-file", ready] + arguments,
                                     in: nil, input: .null)
        let started = await poll(timeout: .seconds(30)) { [process] in FileManager.default.fileExists(atPath: ready) || !process.isRunning }
        guard started, process.isRunning else {
            throw TestSupportError("the virtual camera did not start\(started ? "" : " within 30 s")\n\(process.lastLines())")
        }
        let text = try String(contentsOfFile: ready, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let chosen = UInt16(text) else { throw TestSupportError("bad ready file: '\(text)'") }
        self.port = chosen
    }

    /// The libgphoto2 port of this camera.
    public var portSpec: String { "ptpip:127.0.0.1:\(port):\(port)" }

    /// What the camera logged.
    public var logText: String { process.stderrSoFar }

    /// Waits until the camera's log shows `text` (a gate the camera reached, say); the
    /// test fails after `timeout`, with the log's last lines.
    @discardableResult
    public func waitForLog(_ text: String, timeout: Duration = .seconds(30), sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        await process.waitForOutput(text, on: .stderr, timeout: timeout, sourceLocation: sourceLocation)
    }

    /// Waits until the camera's log satisfies `condition` (described by `what`).
    @discardableResult
    public func waitForLog(_ what: String, timeout: Duration = .seconds(30), sourceLocation: SourceLocation = #_sourceLocation,
                           _ condition: @escaping @Sendable (String) -> Bool) async -> Bool {
        await process.waitForOutput(on: .stderr, what, timeout: timeout, sourceLocation: sourceLocation, condition)
    }

    /// Presses the camera's own shutter button.
    public func pressButton() { process.signal(SIGUSR1) }

    /// Pulls the cable (the host loses the camera; shots taken meanwhile stay on the card),
    /// or plugs it in again: the log says "cable pulled" / "cable plugged in".
    public func toggleCable() { process.signal(SIGUSR2) }

    /// Stops the camera (like pulling the cable) and waits until it is gone.
    public func stop() async {
        guard process.isRunning else { return }
        process.killGroup()
        await process.waitAfterKill()
    }

    /// Runs the gphoto2 CLI against this camera, under a deadline.
    public func gphoto2(_ arguments: [String]) async throws -> ProgramOutput {
        try await runProgram(["gphoto2", "--port", portSpec, "--camera", "PTP/IP Camera"] + arguments,
                             environment: ["HOME": home.path], timeout: .seconds(30))
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
