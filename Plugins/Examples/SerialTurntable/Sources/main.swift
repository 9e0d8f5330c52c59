// A sample step program for a spin (docs/config.md, `kind: spin`): it turns a turntable on a
// serial line by one step and returns once the table says it has stopped. Adapt the
// command and the reply to your table's protocol with the options; the session runs it
// between two frames, with the next frame's place in its environment.
//
//   shutterpipe-turntable --device /dev/ttyUSB0 [--baud 9600] [--send 'R{degrees}']
//                         [--reply OK] [--timeout 20] step DEGREES
//
// It writes the command (`{degrees}` is the step, `{angle}` the next frame's angle from
// SHUTTERPIPE_ANGLE) and a CR LF, then reads lines until one is the reply (done), starts
// with ERR (the table's refusal, said as it is) or the timeout passes. Exit 0 when the table
// answered, 1 when it did not or refused (the spin stops there and says this program's
// last line), 2 for a usage mistake.
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

struct Options {
    var device = ""
    var baud = 9600
    var send = "R{degrees}"
    var reply = "OK"
    var timeoutSeconds = 20.0
    var degrees = ""
}

func fail(_ message: String, status: Int32 = 1) -> Never {
    fputs("shutterpipe-turntable: \(message)\n", stderr)
    exit(status)
}

func parse(_ arguments: [String]) -> Options {
    var options = Options()
    var rest = arguments[...]
    func value(_ name: String) -> String {
        guard let next = rest.popFirst() else { fail("\(name) needs a value", status: 2) }
        return next
    }
    while let argument = rest.popFirst() {
        switch argument {
        case "--device": options.device = value(argument)
        case "--baud": options.baud = Int(value(argument)) ?? 0
        case "--send": options.send = value(argument)
        case "--reply": options.reply = value(argument)
        case "--timeout": options.timeoutSeconds = Double(value(argument)) ?? -1
        case "step": options.degrees = value(argument)
        case "-h", "--help":
            print("usage: shutterpipe-turntable --device PATH [--baud 9600] [--send 'R{degrees}'] [--reply OK] [--timeout 20] step DEGREES")
            exit(0)
        default: fail("unknown argument '\(argument)' (see --help)", status: 2)
        }
    }
    guard !options.device.isEmpty else { fail("--device is required: the table's serial port (/dev/ttyUSB0, /dev/serial/by-id/...)", status: 2) }
    guard Double(options.degrees) != nil else { fail("'step DEGREES' is required: how far to turn, in degrees (10 for 36 frames a turn)", status: 2) }
    guard options.timeoutSeconds > 0 else { fail("--timeout takes seconds (20)", status: 2) }
    return options
}

/// The termios speed constant for `baud`, or nil when the line cannot run at it.
func speed(_ baud: Int) -> speed_t? {
    let speeds: [Int: Int32] = [1200: B1200, 2400: B2400, 4800: B4800, 9600: B9600, 19200: B19200, 38400: B38400,
                                57600: B57600, 115200: B115200, 230400: B230400]
    return speeds[baud].map { speed_t($0) }
}

/// Opens the serial line raw at `baud`: 8 data bits, no parity, no flow control, input
/// that waited from before dropped.
func openLine(_ options: Options) -> Int32 {
    guard let rate = speed(options.baud) else { fail("--baud \(options.baud) is not a serial speed (9600, 19200, 38400, 57600, 115200)", status: 2) }
    let line = open(options.device, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
    guard line >= 0 else {
        let reason = String(cString: strerror(errno))
        switch errno {
        case ENOENT: fail("no serial port at '\(options.device)' (\(reason)): is the table plugged in? `ls /dev/serial/by-id/` lists the ports")
        case EACCES, EPERM: fail("no permission to open '\(options.device)' (\(reason)): add the session's user to the port's group (dialout: sudo usermod -aG dialout $USER, then log in again)")
        case EBUSY: fail("'\(options.device)' is held by another program (\(reason)): close it (a serial console, ModemManager)")
        default: fail("cannot open '\(options.device)': \(reason)")
        }
    }
    var settings = termios()
    guard tcgetattr(line, &settings) == 0 else { fail("'\(options.device)' is not a serial port (\(String(cString: strerror(errno)))): name the table's port with --device") }
    cfmakeraw(&settings)
    settings.c_cflag |= tcflag_t(CLOCAL) | tcflag_t(CREAD)
    settings.c_cflag &= ~(tcflag_t(CSTOPB) | tcflag_t(CRTSCTS))
    _ = cfsetispeed(&settings, rate)
    _ = cfsetospeed(&settings, rate)
    guard tcsetattr(line, TCSANOW, &settings) == 0 else { fail("cannot set '\(options.device)' to \(options.baud) baud: \(String(cString: strerror(errno)))") }
    _ = tcflush(line, TCIFLUSH)
    return line
}

func writeAll(_ line: Int32, _ text: String, device: String) {
    var bytes = Array(text.utf8)[...]
    var waited = 0
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(line, $0.baseAddress, $0.count) }
        if written > 0 { bytes = bytes.dropFirst(written); continue }
        if written < 0 && errno == EINTR { continue }
        if written < 0 && errno == EAGAIN && waited < 100 {
            var pending = pollfd(fd: line, events: Int16(POLLOUT), revents: 0)
            _ = poll(&pending, 1, 50)
            waited += 1
            continue
        }
        fail("cannot write to '\(device)': \(String(cString: strerror(errno)))")
    }
}

let options = parse(Array(CommandLine.arguments.dropFirst()))
let angle = getenv("SHUTTERPIPE_ANGLE").map { String(cString: $0) } ?? ""
let command = options.send.replacing("{degrees}", with: options.degrees).replacing("{angle}", with: angle)
let line = openLine(options)
writeAll(line, command + "\r\n", device: options.device)

// Lines until the reply, a refusal, or the deadline.
var deadline = timespec()
clock_gettime(CLOCK_MONOTONIC, &deadline)
let limit = Double(deadline.tv_sec) + Double(deadline.tv_nsec) / 1e9 + options.timeoutSeconds
var pending: [UInt8] = []
var heard: [String] = []
while true {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    let left = limit - (Double(now.tv_sec) + Double(now.tv_nsec) / 1e9)
    guard left > 0 else {
        let said = heard.isEmpty ? "nothing" : "only '\(heard.suffix(3).joined(separator: "', '"))'"
        fail("the turntable at '\(options.device)' did not answer '\(options.reply)' to '\(command)' within \(options.timeoutSeconds) s (it said \(said)): check that it is powered, its cable, and the speed (--baud \(options.baud))")
    }
    var wait = pollfd(fd: line, events: Int16(POLLIN), revents: 0)
    let ready = poll(&wait, 1, Int32(min(left, 1) * 1000) + 1)
    if ready < 0 && errno != EINTR { fail("cannot wait for '\(options.device)': \(String(cString: strerror(errno)))") }
    if ready <= 0 { continue }
    if wait.revents & Int16(POLLHUP | POLLERR) != 0 && wait.revents & Int16(POLLIN) == 0 {
        fail("the turntable at '\(options.device)' went away while it turned (unplugged?)")
    }
    var buffer = [UInt8](repeating: 0, count: 256)
    let count = buffer.withUnsafeMutableBytes { read(line, $0.baseAddress, $0.count) }
    if count < 0 && (errno == EAGAIN || errno == EINTR) { continue }
    if count <= 0 { fail("the turntable at '\(options.device)' went away while it turned (unplugged?)") }
    pending += buffer[..<count]
    // A line ends at CR or LF; a table's chatter is bounded.
    while let end = pending.firstIndex(where: { $0 == 10 || $0 == 13 }) {
        let text = String(decoding: pending[..<end], as: UTF8.self).filter { !$0.isASCII || $0.asciiValue! >= 32 }
        pending.removeSubrange(...end)
        guard !text.isEmpty else { continue }
        if text == options.reply { exit(0) }
        if text.hasPrefix("ERR") { fail("the turntable at '\(options.device)' refused '\(command)': \(text)") }
        heard.append(String(text.prefix(80)))
    }
    if pending.count > 4096 { pending.removeAll() }
}
