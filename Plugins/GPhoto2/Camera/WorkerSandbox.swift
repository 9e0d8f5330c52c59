import CWorkerConfinement
import Foundation
import ShutterPipeSupport
import GPhoto2Backend

/// Applies a ``WorkerConfinement`` to the worker process, first thing in `main`, while it
/// has one thread and before libgphoto2 loads.
///
/// The worker moves into its settings folder (its `HOME`) and calls it `.`: an
/// unprivileged user may not be able to walk the path to it (a home only root can
/// enter), and Landlock's rule holds the folder itself, not its name.
public enum WorkerSandbox {
    /// What was applied, for the log: one line, and the warnings of what could not be.
    public struct Outcome: Sendable {
        public var summary: String
        public var warnings: [String]
    }

    /// Confines this process. Returns nil when the confinement is off; exits the process
    /// if a step failed half-way (a worker with its user switched but no filter must not
    /// run).
    public static func apply(_ confinement: WorkerConfinement?) -> Outcome? {
        let confinement = confinement ?? WorkerConfinement()
        guard confinement.enabled else { return nil }
        var warnings: [String] = []
        if let home = ProcessInfo.processInfo.environment["HOME"], !home.isEmpty, home != "." {
            if chdir(home) == 0 { setenv("HOME", ".", 1) } else { warnings.append("cannot enter its settings folder \(home): \(String(cString: strerror(errno)))") }
        }
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 1
        if threads > 1 { warnings.append("\(threads) threads at confinement: Landlock holds only the first") }

        let reads = readPaths() + confinement.readPaths
        let writes = ["."]
        let devices = ["/dev/bus/usb", "/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"]
        let groups = confinement.user?.groups.map { gid_t($0) } ?? []
        let ports = confinement.tcpPorts
        var abi: Int32 = 0
        var report = [CChar](repeating: 0, count: 2048)
        let applied = withCStrings(reads) { read in
            withCStrings(writes) { write in
                withCStrings(devices) { device in
                    groups.withUnsafeBufferPointer { groups in
                        ports.withUnsafeBufferPointer { ports in
                            var c = sp_confinement()
                            c.switch_user = confinement.user == nil ? 0 : 1
                            c.uid = uid_t(confinement.user?.uid ?? 0)
                            c.gid = gid_t(confinement.user?.gid ?? 0)
                            c.groups = groups.baseAddress
                            c.group_count = groups.count
                            c.read_paths = read.baseAddress
                            c.read_count = read.count
                            c.write_paths = write.baseAddress
                            c.write_count = write.count
                            c.device_paths = device.baseAddress
                            c.device_count = device.count
                            c.tcp_ports = ports.baseAddress
                            c.tcp_port_count = ports.count
                            return sp_confine(&c, &abi, &report, report.count)
                        }
                    }
                }
            }
        }
        let said = String(decoding: report.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self).trimmingCharacters(in: .whitespaces)
        if applied < 0 {
            FileHandle.standardError.write(Data("shutterpipe-camera-worker: cannot confine itself: \(said)\n".utf8))
            exit(70)
        }
        if !said.isEmpty { warnings.append(said) }
        var parts: [String] = []
        if applied & Int32(SP_CONFINED_USER) != 0, let user = confinement.user { parts.append("user \(user.name) (\(user.uid))") }
        else if geteuid() == 0 { warnings.append("runs as root: set the gphoto2 option 'workerUser' to an unprivileged user") }
        if applied & Int32(SP_CONFINED_CAPABILITIES) != 0 { parts.append("no capabilities") }
        if applied & Int32(SP_CONFINED_NO_NEW_PRIVS) != 0 { parts.append("no_new_privs") }
        if applied & Int32(SP_CONFINED_LANDLOCK) != 0 {
            let network = abi >= 4 ? (ports.isEmpty ? ", no TCP" : ", TCP to port \(ports.map(String.init).joined(separator: ", "))") : ""
            parts.append("Landlock ABI \(abi) (files under its folder\(network))")
        }
        if applied & Int32(SP_CONFINED_SECCOMP) != 0 { parts.append("seccomp filter (\(sp_confinement_allowed_syscall_count()) calls)") }
        let missing = [(SP_CONFINED_LANDLOCK, "Landlock"), (SP_CONFINED_SECCOMP, "seccomp")].filter { applied & Int32($0.0) == 0 }.map(\.1)
        if !missing.isEmpty {
            warnings.append("runs without \(missing.joined(separator: " and ")) (see above): a device that takes libgphoto2 over gets more than its folder")
        }
        return Outcome(summary: "confined: " + parts.joined(separator: ", "), warnings: warnings)
    }

    /// What the worker reads: the system's libraries and data, every folder a file it has
    /// mapped lives in (the toolchain's runtime, the worker itself), the camera drivers,
    /// device information (/sys, udev's database) and its own /proc entry. Not /etc as a
    /// whole, /home, /root or another process.
    static func readPaths() -> [String] {
        var paths = ["/usr", "/lib", "/lib64", "/lib32", "/libx32", "/sys", "/run/udev", "/proc/self",
                     "/etc/ld.so.cache", "/etc/localtime", "/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf",
                     "/etc/gai.conf", "/etc/host.conf", "/etc/services", "/etc/protocols", "/etc/passwd", "/etc/group"]
        let environment = ProcessInfo.processInfo.environment
        for key in ["CAMLIBS", "IOLIBS"] { if let path = environment[key], !path.isEmpty { paths.append(path) } }
        if let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8) {
            var folders = Set<String>()
            for line in maps.split(separator: "\n") {
                guard let slash = line.firstIndex(of: "/") else { continue }
                let file = String(line[slash...])
                guard !file.hasPrefix("/memfd:"), !file.hasSuffix(" (deleted)") else { continue }
                folders.insert(PathName.parent(file))
            }
            paths += folders.sorted()
        }
        return paths
    }

    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafeBufferPointer<UnsafePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } }
        return pointers.withUnsafeBufferPointer(body)
    }
}
