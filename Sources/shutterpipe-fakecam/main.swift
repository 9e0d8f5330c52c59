#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Dispatch
import Foundation
import ShutterPipeKit
import ShutterPipeRuntime
import ShutterPipeSupport

let usage = """
Usage: shutterpipe-fakecam [options]

A virtual PTP/IP camera on 127.0.0.1 that libgphoto2 and the gphoto2 CLI drive like a
real one: capture, download, delete and settings (ISO, shutter speed, aperture, image
format). Use it with the port ptpip:127.0.0.1:PORT:PORT and the model "PTP/IP Camera".

Options:
  --port N              port to listen on (default 15740; 0 picks a free one)
  --ready-file PATH     write the port there once listening (for scripts and tests)
  --images DIR          serve the files of DIR in name order, looping (default: synthesise JPEGs)
  --width N --height N  size of synthesised JPEGs (default 640x480)
  --detail N            random detail per 8x8 block, 0-63 (9 at 6000x4000 gives ~10 MB)
  --raw-plus-jpeg       start in RAW+JPEG mode (image format can also be set through PTP)
  --capture-delay DUR   time between a capture and its events, as for a long exposure (e.g. 2s)
  --gate FILE           hold each capture's events until FILE has as many lines as captures so
                        far (the Nth line releases capture N); logs "capture N waits at the
                        gate": for tests that act while a shot is in flight
  --download-gate FILE  hold each photo's download after its first 512 KiB the same way
                        ("download N waits at the gate"): its front is on the wire
  --open-delay DUR      OpenSession answers after DUR: a camera slow to wake (e.g. 3s)
  --objects-per-capture N  exposures per capture, as bracketing or continuous drive
  --reuse-names         name every exposure capt0000.jpg
  --duplicate-events    send every ObjectAdded twice
  --bogus-events        before each ObjectAdded, one for an object that does not exist and
                        an unknown event
  --drop-after N        drop the connection when capture N+1 is asked for (once)
  --refuse              refuse every connection
  --store-full-after N  answer captures after the Nth with Store Full (0: at once)
  --card-fills-after N  captures after the Nth are taken, then the card runs full: a
                        StoreFull event and no file
  --no-live-view        a camera without live view (no PTP 1.1 stream operations)
  --live-size WxH       the live-view frames' size (default 640x480)
  --lens                a lens that focuses: FocusDistance (libgphoto2's focusdistance, 300 mm
                        to 3300 mm in 50 mm steps) moves it; live frames and synthesised photos
                        show a focus chart, sharp at --sharp-at MM (default 1800), blurred more
                        each step away; the lens starts at --focus-at MM (default 800)
  --ram-capture         capture into the camera's memory as Nikon bodies do: every exposure
                        is object 0xFFFF0001 named capt0000.jpg, replacing the one before
  --empty-captures LIST these captures (2,4) make no file: CaptureComplete alone
  --busy-captures LIST  answer these InitiateCapture requests (1,3: the first and third)
                        with DeviceBusy, as a body still writing its last shot
  --delete-delay DUR    each DeleteObject takes DUR, then a DevicePropChanged event (e.g. 300ms)
  --lose-events-of N    never send the events of capture N (libgphoto2 then waits for good)
  --short-transfers N   the first N object downloads send half the object, while its
                        ObjectInfo still announces all of it (a transfer cut short)
  --link-speed MB       pace downloads to MB megabytes a second, as a USB 2 cable (20) or
                        Wi-Fi would (default: as fast as the socket goes)
  --iso-choices LIST    the ISO speeds offered, such as 100,200,400 (default 100 to 3200)
  --model NAME          model name (default "Virtual Camera")
  --serial TEXT         serial number (default SP-0001)
  --battery PERCENT     battery level reported (default 87)
  --verbose             log every operation to stderr
  --capture-log FILE    append when each InitiateCapture arrived (CLOCK_MONOTONIC ns), a line
                        each: for measuring how far apart a rig's cameras fire (and when
                        each bulb exposure opened)
  --clock-offset SECONDS the camera's clock that far ahead of the computer's (negative:
                        behind; its files' dates follow it), as a body's clock set by hand
  --bulb                a camera with bulb: PTP's open capture (InitiateOpenCapture and
                        TerminateOpenCapture, libgphoto2's `movie`) holds the shutter open;
                        the photo's ExposureTime is how long it was open, to the millisecond
  --malformed PERCENT   damage that share of the packets sent, for fuzzing PTP/IP clients
                        (lying lengths, cut payloads, unknown types, flipped bytes, garbage)
  --seed N              the seed of --malformed's choices (default 1), to replay a run

Signals: SIGUSR1 presses the camera's own shutter button (also while unplugged: the shot
is on the card, announced to nobody); SIGUSR2 pulls the cable (every connection ends, new
ones are refused) and, sent again, plugs it in; SIGTERM and SIGINT exit.
"""

func fail(_ message: String) -> Never {
    Console.standardError.printLine("shutterpipe-fakecam: \(message)")
    exit(2)
}

var options = CameraOptions()
var arguments = Array(CommandLine.arguments.dropFirst())
@MainActor func value(_ name: String) -> String {
    guard !arguments.isEmpty else { fail("\(name) needs a value") }
    return arguments.removeFirst()
}
@MainActor func number(_ name: String) -> Int {
    guard let number = Int(value(name)), number >= 0 else { fail("\(name) needs a whole number") }
    return number
}
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "--port": options.port = UInt16(clamping: number(argument))
    case "--ready-file": options.readyFile = value(argument)
    case "--images": options.images = value(argument)
    case "--width": options.width = max(8, number(argument))
    case "--height": options.height = max(8, number(argument))
    case "--detail": options.detail = min(63, number(argument))
    case "--raw-plus-jpeg": options.rawPlusJPEG = true
    case "--capture-delay":
        guard let delay = PluginOptions.parseDuration(value(argument)) else { fail("--capture-delay needs a duration such as 2s") }
        options.captureDelay = delay
    case "--gate": options.gate = value(argument)
    case "--download-gate": options.downloadGate = value(argument)
    case "--open-delay":
        guard let delay = PluginOptions.parseDuration(value(argument)) else { fail("--open-delay needs a duration such as 3s") }
        options.openDelay = delay
    case "--objects-per-capture": options.objectsPerCapture = max(1, number(argument))
    case "--reuse-names": options.reuseNames = true
    case "--duplicate-events": options.duplicateEvents = true
    case "--bogus-events": options.bogusEvents = true
    case "--drop-after": options.dropAfter = number(argument)
    case "--refuse": options.refuse = true
    case "--store-full-after": options.storeFullAfter = number(argument)
    case "--card-fills-after": options.cardFillsAfter = number(argument)
    case "--no-live-view": options.noLiveView = true
    case "--live-size":
        let size = value(argument).split(separator: "x").compactMap { Int($0) }
        guard size.count == 2, size.allSatisfy({ $0 >= 8 && $0 <= 8192 }) else { fail("--live-size needs WxH, such as 1024x768") }
        (options.liveWidth, options.liveHeight) = (size[0], size[1])
    case "--lens": options.lens = true
    case "--sharp-at", "--focus-at":
        let millimetres = UInt32(number(argument))
        guard FocusChart.positions.contains(millimetres) else { fail("\(argument) needs one of the lens's distances: 300 to 3300 in steps of 50") }
        if argument == "--sharp-at" { options.sharpAt = millimetres } else { options.focusAt = millimetres }
    case "--ram-capture": options.ramCapture = true
    case "--empty-captures":
        let numbers = value(argument).split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !numbers.isEmpty else { fail("--empty-captures needs a list such as 2,4") }
        options.emptyCaptures = Set(numbers)
    case "--busy-captures":
        let numbers = value(argument).split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !numbers.isEmpty else { fail("--busy-captures needs a list such as 1,3") }
        options.busyCaptures = Set(numbers)
    case "--delete-delay":
        guard let delay = PluginOptions.parseDuration(value(argument)) else { fail("--delete-delay needs a duration such as 300ms") }
        options.deleteDelay = delay
    case "--lose-events-of": options.loseEventsOf = number(argument)
    case "--short-transfers": options.shortTransfers = number(argument)
    case "--link-speed": options.linkBytesPerSecond = number(argument) * 1_000_000
    case "--iso-choices":
        let choices = value(argument).split(separator: ",").compactMap { UInt32($0.trimmingCharacters(in: .whitespaces)) }
        guard !choices.isEmpty else { fail("--iso-choices needs a list such as 100,200,400") }
        options.isoChoices = choices
    case "--model": options.model = value(argument)
    case "--serial": options.serial = value(argument)
    case "--battery": options.battery = min(100, number(argument))
    case "--verbose": options.verbose = true
    case "--capture-log": options.captureLog = value(argument)
    case "--bulb": options.bulb = true
    case "--clock-offset":
        guard let seconds = Int(value(argument)) else { fail("\(argument) needs a whole number of seconds (negative: behind the computer)") }
        options.clockOffset = TimeInterval(seconds)
    case "--malformed": options.malformedPercent = min(100, number(argument))
    case "--seed": options.seed = UInt64(number(argument))
    case "-h", "--help": Console.standardOutput.printLine(usage); exit(0)
    default: fail("unknown option '\(argument)'\n\n\(usage)")
    }
}

let log: @Sendable (String) -> Void = { message in
    Console.standardError.printLine("shutterpipe-fakecam: \(message)")
}
let camera = VirtualCamera(options: options)
let server: PTPIPServer
do {
    server = try PTPIPServer(camera: camera, log: log)
} catch {
    fail("\(error)")
}
signal(SIGPIPE, SIG_IGN)
// The button and the cable, taken from before the ready file says the camera is there.
let signals: SignalForwarder.Listener
do {
    signals = try SignalForwarder.listen([SIGUSR1, SIGUSR2]) { number in
        if number == SIGUSR1 { server.pressButton() } else { server.toggleCable() }
    }
} catch {
    fail("\(error)")
}
if let readyFile = options.readyFile {
    let temporary = readyFile + ".tmp"
    try? Data("\(server.port)\n".utf8).write(to: URL(fileURLWithPath: temporary))
    rename(temporary, readyFile)
}
log("listening on 127.0.0.1:\(server.port) (use --port ptpip:127.0.0.1:\(server.port):\(server.port) --camera \"PTP/IP Camera\")")
OwnedThread.start("fakecam accept") { server.serve() }
while true { sleep(3600) }

