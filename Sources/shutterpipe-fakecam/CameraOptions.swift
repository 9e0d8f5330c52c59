import Foundation

/// What the virtual camera is told to do, from its command line.
struct CameraOptions: Sendable {
    var port: UInt16 = 15740
    var readyFile: String?
    var images: String?
    var width = 640
    var height = 480
    var detail = 0
    var captureDelay: Duration = .zero
    /// A file that holds each capture's events until it has as many lines as captures so
    /// far (`--gate`).
    var gate: String?
    /// Hold each photo's download after its first DATA packet until FILE has as many
    /// lines as downloads so far (`--download-gate`).
    var downloadGate: String?
    /// How long OpenSession takes to answer: a camera slow to wake.
    var openDelay: Duration = .zero
    /// Exposures each InitiateCapture makes (bracketing, continuous drive).
    var objectsPerCapture = 1
    /// Name every exposure capt0000.jpg, as cameras that number from zero each session.
    var reuseNames = false
    /// Send every ObjectAdded twice.
    var duplicateEvents = false
    /// Send an ObjectAdded for an object that does not exist, and an unknown event,
    /// before every real ObjectAdded.
    var bogusEvents = false
    var dropAfter: Int?
    var refuse = false
    var storeFullAfter: Int?
    /// Captures after this many are taken (InitiateCapture answered OK), then the card
    /// runs full: a StoreFull event and no file, as a camera whose card fills mid-capture.
    var cardFillsAfter: Int?
    /// No live view: the PTP 1.1 stream operations and properties are not offered.
    var noLiveView = false
    /// The live-view frames' size (`--live-size WxH`).
    var liveWidth = 640
    var liveHeight = 480
    /// A lens that focuses (`--lens`): FocusDistance (0x5009) moves it, and live frames
    /// and synthesised photos show a focus chart as sharp as it is focused (``FocusChart``).
    var lens = false
    /// Where the chart is sharp, in millimetres (`--sharp-at`), and where the lens starts
    /// (`--focus-at`).
    var sharpAt: UInt32 = 1800
    var focusAt: UInt32 = 800
    /// Capture into the camera's memory, as Nikon bodies do: every exposure is object
    /// 0xFFFF0001 named capt0000.jpg, replacing the one before (`--ram-capture`).
    var ramCapture = false
    /// How long a DeleteObject takes, with a DevicePropChanged event after it (`--delete-delay`).
    var deleteDelay: Duration = .zero
    /// Captures that make no file: CaptureComplete alone (`--empty-captures`).
    var emptyCaptures: Set<Int> = []
    /// Captures answered DeviceBusy, as a body still writing its last shot (`--busy-captures`).
    var busyCaptures: Set<Int> = []
    var model = "Virtual Camera"
    var serial = "SP-0001"
    var battery = 87
    var rawPlusJPEG = false
    var verbose = false
    var malformedPercent = 0
    var loseEventsOf: Int?
    var shortTransfers = 0
    var seed: UInt64 = 1
    /// Bytes a second a download is paced to (0: as fast as the socket goes), as a USB 2
    /// cable (about 20 MB/s) or Wi-Fi delivers them.
    var linkBytesPerSecond = 0
    /// The ISO speeds offered (ExposureIndex's enumeration); the first is the current one
    /// unless 100 is among them.
    var isoChoices: [UInt32] = [100, 200, 400, 800, 1600, 3200]
    /// A file that gets one line per InitiateCapture: when it arrived, in CLOCK_MONOTONIC
    /// nanoseconds (comparable across the cameras of a rig on one machine).
    var captureLog: String?
    /// Bulb (`--bulb`): PTP's open capture (InitiateOpenCapture, TerminateOpenCapture),
    /// which libgphoto2 offers as `movie`, holds the shutter open; the photo's ExposureTime
    /// is how long it was open, to the millisecond.
    var bulb = false
    /// Seconds the camera's clock is ahead of the computer's (`--clock-offset`): a body's
    /// clock is set by hand, never to the second. Its files' object dates follow it.
    var clockOffset: TimeInterval = 0
}
