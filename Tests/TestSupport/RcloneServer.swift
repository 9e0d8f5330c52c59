#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing

/// An `rclone serve` (SFTP or WebDAV) or an FTP server (pyftpdlib: Debian's rclone has no
/// `serve ftp`) on a loopback port of its own, serving a temporary folder: an upload
/// target that a test can kill and start again on the same port. Stopped when released.
public final class RcloneServer: Sendable {
    public enum Kind: String, Sendable { case sftp, webdav, ftp }

    public let kind: Kind
    public let port: UInt16
    /// The folder it serves.
    public let root: TemporaryDirectory
    private let home: TemporaryDirectory
    /// The password as rclone keeps it (obscured): what must never show in a log.
    public let obscured: String
    private let process = Mutex<RunningProcess?>(nil)

    public static let user = "shooter"
    public static let password = "pw-shooter"

    /// Starts a server; `bandwidth` limits what it takes in (rclone's `--bwlimit`), so an
    /// upload lasts long enough to be cut.
    public init(_ kind: Kind, _ label: String, bandwidth: String? = nil) async throws {
        self.kind = kind
        root = TemporaryDirectory("rclone-\(kind.rawValue)-\(label)")
        home = TemporaryDirectory("rclone-home-\(label)")
        port = try freePort()
        let output = try await runProgram(["rclone", "obscure", Self.password], environment: ["HOME": home.path])
        guard output.status == 0 else { throw TestSupportError("rclone obscure failed (is rclone installed? scripts/bootstrap installs it): \(output.text)") }
        obscured = output.text.trimmingCharacters(in: .whitespacesAndNewlines)
        self.bandwidth = bandwidth
        try await start()
    }

    private let bandwidth: String?

    deinit {
        process.withLock { $0?.signal(SIGKILL) }
    }

    /// The rclone remote for it, inline (no rclone config needed), with `folder`.
    public func remote(_ folder: String = "") -> String {
        switch kind {
        case .sftp: ":sftp,host=127.0.0.1,port=\(port),user=\(Self.user),pass=\(obscured):\(folder)"
        case .webdav: ":webdav,url='http://127.0.0.1:\(port)',user=\(Self.user),pass=\(obscured):\(folder)"
        case .ftp: ":ftp,host=127.0.0.1,port=\(port),user=\(Self.user),pass=\(obscured):\(folder)"
        }
    }

    /// Starts it (again, after ``kill()``) and waits until it accepts connections.
    public func start() async throws {
        var arguments = ["serve", kind.rawValue, root.path, "--addr", "127.0.0.1:\(port)", "--user", Self.user, "--pass", Self.password]
        if let bandwidth { arguments += ["--bwlimit", bandwidth] }
        var program = "/usr/bin/rclone"
        if kind == .ftp {
            program = "/usr/bin/python3"
            arguments = ["-m", "pyftpdlib", "-i", "127.0.0.1", "-p", String(port), "-w", "-d", root.path, "-u", Self.user, "-P", Self.password]
        }
        let started = try await RunningProcess.start(program: program, arguments, in: root.path, environment: ["HOME": home.path])
        process.withLock { $0 = started }
        let port = self.port
        guard await eventually(timeout: .seconds(60), { portAccepts(port) }) else {
            throw TestSupportError("the \(kind.rawValue) server did not start (scripts/bootstrap installs rclone and python3-pyftpdlib): \(started.stderrSoFar)")
        }
    }

    /// Kills it at once (SIGKILL), as a crash or a pulled network cable would.
    public func kill() async {
        guard let running = process.withLock({ state -> RunningProcess? in defer { state = nil }; return state }) else { return }
        running.signal(SIGKILL)
        _ = await running.wait(timeout: .seconds(30))
    }

    /// Every file under the served folder, by its path relative to it, with its bytes.
    public func files() -> [String: Data] {
        var found: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root.path)
        while let relative = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let path = root.file(relative)
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                found[relative] = FileManager.default.contents(atPath: path)
            }
        }
        return found
    }
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
public func portAccepts(_ port: UInt16) -> Bool {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}
