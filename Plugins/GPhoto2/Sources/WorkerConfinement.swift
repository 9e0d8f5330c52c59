import Foundation

/// What a camera worker is confined to, decided by the backend and applied by the worker
/// itself before libgphoto2 loads (it travels in the worker's environment, as JSON in
/// ``variable``).
///
/// libgphoto2 parses whatever a USB device or a PTP/IP camera sends; a broken or malicious
/// device that takes it over gets the worker, and the worker gets nothing: no
/// capabilities, `no_new_privs`, an unprivileged user when the session is root, files only
/// under its settings folder (the libraries read-only), TCP only to its camera's ports,
/// and a seccomp filter that kills it on any system call outside libgphoto2's needs
/// (exec, fork, ptrace, mount…). Photos leave as the memfds it hands over; it holds no
/// descriptor of the output folder. A kernel without Landlock or seccomp runs the worker
/// without that part, with a warning.
public struct WorkerConfinement: Codable, Sendable, Equatable {
    /// The environment variable a worker reads it from.
    public static let variable = "SHUTTERPIPE_WORKER_CONFINEMENT"

    /// Off only when the config says `confineWorkers: false` (diagnosis, the benchmark).
    public var enabled = true
    /// The user to switch to when the session runs as root.
    public var user: User?
    /// TCP ports the worker may connect to: a PTP/IP camera's command and event ports.
    /// Empty: no network sockets at all.
    public var tcpPorts: [UInt16] = []
    /// Folders it may read beyond the system's (the gphoto2 option `workerReadPaths`): a
    /// self-built libgphoto2's drivers, or drivers linked from elsewhere.
    public var readPaths: [String] = []

    /// An unprivileged user: ids, and the supplementary groups (`plugdev` for USB cameras).
    public struct User: Codable, Sendable, Equatable {
        public var name: String
        public var uid: UInt32
        public var gid: UInt32
        public var groups: [UInt32]

        public init(name: String, uid: UInt32, gid: UInt32, groups: [UInt32]) {
            self.name = name
            self.uid = uid
            self.gid = gid
            self.groups = groups
        }
    }

    public init(enabled: Bool = true, user: User? = nil, tcpPorts: [UInt16] = [], readPaths: [String] = []) {
        self.enabled = enabled
        self.user = user
        self.tcpPorts = tcpPorts
        self.readPaths = readPaths
    }

    /// The TCP ports of a camera port string: `ptpip:HOST:PORT:PORT` (IPv6 hosts in
    /// brackets) gives its numbers; a `ptpip:` port without one, 15740; USB and the rest,
    /// none.
    public static func tcpPorts(of port: String?) -> [UInt16] {
        guard let port, port.hasPrefix("ptpip:") else { return [] }
        var rest = Substring(port.dropFirst("ptpip:".count))
        if rest.hasPrefix("["), let end = rest.firstIndex(of: "]") { rest = rest[rest.index(after: end)...] }
        else if let colon = rest.firstIndex(of: ":") { rest = rest[colon...] } else { rest = "" }
        let numbers = rest.split(separator: ":").compactMap { UInt16($0) }
        return numbers.isEmpty ? [15740] : Array(Set(numbers)).sorted()
    }

    /// The JSON the worker's environment carries.
    public var encoded: String {
        (try? String(decoding: JSONEncoder().encode(self), as: UTF8.self)) ?? "{}"
    }

    /// Read from a worker's environment; nil when it says nothing (a worker started by hand).
    public static func fromEnvironment() -> WorkerConfinement? {
        guard let text = ProcessInfo.processInfo.environment[variable] else { return nil }
        return try? JSONDecoder().decode(WorkerConfinement.self, from: Data(text.utf8))
    }
}
