#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// A D-Bus daemon of the test's own (session configuration), killed when released.
public final class PrivateBus: @unchecked Sendable {
    /// The bus address, for DBUS_SESSION_BUS_ADDRESS.
    public let address: String
    private let daemon: RunningProcess
    private let folder = TemporaryDirectory("bus")

    /// Starts `dbus-daemon` in the foreground (a forked one would keep our pipes open) and
    /// waits for its address.
    public init() async throws {
        ignoreSIGPIPE()
        daemon = try await RunningProcess.start(program: "/usr/bin/dbus-daemon", ["--config-file=/usr/share/dbus-1/session.conf", "--nofork", "--print-address=1"],
                                    in: folder.path, input: .null)
        guard await daemon.waitForOutput(on: .stdout, "its address", timeout: .seconds(30), { $0.hasSuffix("\n") }) else {
            throw TestSupportError("dbus-daemon did not start")
        }
        address = daemon.stdoutSoFar.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The environment that points programs at this bus.
    public var environment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": address] }

    /// `dbus-send --print-reply` to `destination` on this bus.
    public func send(_ destination: String, _ path: String, _ method: String, _ arguments: [String] = []) async throws -> String {
        try await runProgram(["dbus-send", "--bus=\(address)", "--print-reply", "--reply-timeout=5000", "--dest=\(destination)", path, method] + arguments).text
    }
}
