#if canImport(Glibc)
@preconcurrency import Glibc
#endif

extension ChildProcess {
    /// How a child process ended.
    public enum ExitStatus: Sendable, Equatable, CustomStringConvertible {
        /// It exited with this code.
        case exited(Int32)
        /// A signal ended it.
        case signalled(Int32)

        /// Decodes a `waitpid` status.
        public init(waitStatus status: Int32) {
            let signal = status & 0x7F
            self = signal == 0 ? .exited((status >> 8) & 0xFF) : .signalled(signal)
        }

        /// Whether it exited with code 0.
        public var succeeded: Bool { self == .exited(0) }

        /// The code a shell would report: the exit code, or 128 + the signal.
        public var shellCode: Int32 {
            switch self {
            case .exited(let code): return code
            case .signalled(let signal): return 128 + signal
            }
        }

        /// "exited with 3", "was killed by signal 9 (SIGKILL)".
        public var description: String {
            switch self {
            case .exited(let code): return "exited with \(code)"
            case .signalled(let signal): return "was killed by signal \(signal)\(Self.signalNames[signal].map { " (\($0))" } ?? "")"
            }
        }

        /// "SIGSEGV", or "signal 40" for one without a common name.
        public static func name(ofSignal signal: Int32) -> String {
            signalNames[signal] ?? "signal \(signal)"
        }

        private static let signalNames: [Int32: String] = [
            SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGILL: "SIGILL", SIGABRT: "SIGABRT", SIGBUS: "SIGBUS",
            SIGFPE: "SIGFPE", SIGKILL: "SIGKILL", SIGSEGV: "SIGSEGV", SIGPIPE: "SIGPIPE", SIGALRM: "SIGALRM", SIGTERM: "SIGTERM",
            SIGUSR1: "SIGUSR1", SIGUSR2: "SIGUSR2", SIGSYS: "SIGSYS",
        ]
    }
}
