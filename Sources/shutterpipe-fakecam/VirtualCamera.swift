import Foundation
import ShutterPipeFixtures
import ShutterPipeKit
import Synchronization

/// One object on the virtual card: a folder or an image.
struct CardObject: Sendable {
    var handle: UInt32
    var parent: UInt32
    var name: String
    var format: UInt16
    var data: Payload
    var captureDate: Date
}

/// A device property with its allowed values.
struct DeviceProperty: Sendable {
    var code: UInt16
    var dataType: UInt16  // 2 UINT8, 4 UINT16, 6 UINT32
    var writable: Bool
    var current: UInt32
    var choices: [UInt32]?           // enumeration
    var range: (UInt32, UInt32, UInt32)?  // min, max, step
}

/// The camera's state: its card, its properties, its counters. Shared by the command and
/// event connections and the button signal, so it lives behind a lock.
final class VirtualCamera: Sendable {
    struct State {
        var objects: [UInt32: CardObject] = [:]
        var nextHandle: UInt32 = 100
        var captures = 0
        var imageCounter = 0
        var sourceIndex = 0
        var properties: [UInt16: DeviceProperty] = [:]
        var sessionOpen = false
        /// InitiateCapture requests so far, taken or not.
        var captureRequests = 0
        /// The camera's clock, as DateTime (0x5011) holds it: `YYYYMMDDThhmmss`.
        var dateTime = "20260101T000000"
        var dropped = false
        /// The `--images` files read so far, by index (mapped).
        var sourceBytes: [Int: Data] = [:]
        /// A bulb exposure open since then (CLOCK_MONOTONIC ns), and the length of the one
        /// just closed, in seconds, for the photo it makes.
        var bulbOpenedAt: UInt64?
        var bulbSeconds: Double?
    }

    static let dcim: UInt32 = 1, folder: UInt32 = 2
    /// The handle of the one in-memory exposure of `--ram-capture` (as Nikon bodies use).
    static let ramHandle: UInt32 = 0xFFFF_0001
    static let capacity: UInt64 = 32_000_000_000
    let options: CameraOptions
    let state = Mutex(State())
    private let sources: [URL]
    private let liveView: LiveViewFrames
    /// What the lens sees (`--lens`), and where it is focused.
    let chart: FocusChart?
    let lens: LensPosition

    init(options: CameraOptions) {
        self.options = options
        if let images = options.images {
            let root = URL(fileURLWithPath: images)
            sources = ((try? FileManager.default.contentsOfDirectory(atPath: images)) ?? [])
                .filter { !$0.hasPrefix(".") }.sorted().map { root.appendingPathComponent($0) }
        } else {
            sources = []
        }
        let chart = options.lens ? FocusChart(sharpAt: options.sharpAt) : nil
        self.chart = chart
        let (width, height) = (options.liveWidth, options.liveHeight)
        let lens = LensPosition(options.focusAt)
        self.lens = lens
        liveView = LiveViewFrames { number, comment in
            guard let chart else { return SyntheticJPEG.make(width: width, height: height, shot: 1, marker: number, comment: comment) }
            return chart.jpeg(width: width, height: height, distance: lens.millimetres.load(ordering: .relaxed), marker: number, comment: comment)
        }
        state.withLock { state in
            state.objects[Self.dcim] = CardObject(handle: Self.dcim, parent: 0, name: "DCIM", format: PTP.formatAssociation, data: Payload(), captureDate: now)
            state.objects[Self.folder] = CardObject(handle: Self.folder, parent: Self.dcim, name: "100SPIPE", format: PTP.formatAssociation, data: Payload(), captureDate: now)
            for property in [
                DeviceProperty(code: 0x5001, dataType: 2, writable: false, current: UInt32(options.battery), choices: nil, range: (0, 100, 1)),
                DeviceProperty(code: 0x5004, dataType: 2, writable: true, current: options.rawPlusJPEG ? 1 : 0, choices: [0, 1]),
                DeviceProperty(code: 0x5007, dataType: 4, writable: true, current: 560, choices: [280, 400, 560, 800, 1100, 1600]),
                DeviceProperty(code: 0x500D, dataType: 6, writable: true, current: 80, choices: [10000, 5000, 333, 80, 40, 20, 10]),
                DeviceProperty(code: 0x500F, dataType: 4, writable: true, current: options.isoChoices.contains(100) ? 100 : options.isoChoices[0],
                               choices: options.isoChoices),
                // DateTime, a string (libgphoto2's `datetime`): the value is in State.dateTime.
                DeviceProperty(code: 0x5011, dataType: PTP.typeString, writable: true, current: 0, choices: nil),
            ] + (options.lens ? [
                // FocusDistance (libgphoto2's `focusdistance`): where the lens is focused, in mm.
                DeviceProperty(code: 0x5009, dataType: 4, writable: true, current: options.focusAt, choices: FocusChart.positions),
            ] : []) + (options.noLiveView ? [] : [
                // PTP 1.1 streams: SupportedStreams (bit 0: video) and EnabledStreams.
                DeviceProperty(code: 0x5020, dataType: 6, writable: false, current: 1, choices: nil),
                DeviceProperty(code: 0x5021, dataType: 6, writable: true, current: 0, choices: [0, 1]),
            ]) {
                state.properties[property.code] = property
            }
        }
    }

    /// Accepts a capture, or returns the response code that refuses it. The files come
    /// with ``expose()``, after the answer, as a real camera answers InitiateCapture at once
    /// and exposes afterwards (and libgphoto2 waits for the answer 2.5 s at most).
    func capture() -> Result<Void, PTP.Response> {
        state.withLock { state in
            state.captureRequests += 1
            if options.busyCaptures.contains(state.captureRequests) { return .failure(.deviceBusy) }
            if let limit = options.storeFullAfter, state.captures >= limit { return .failure(.storeFull) }
            state.captures += 1
            return .success(())
        }
    }

    /// Opens the shutter for a bulb exposure (InitiateOpenCapture), or refuses as a capture
    /// is refused; DeviceBusy while one is open.
    func openBulb() -> PTP.Response {
        if state.withLock({ $0.bulbOpenedAt != nil }) { return .deviceBusy }
        if case .failure(let code) = capture() { return code }
        state.withLock { $0.bulbOpenedAt = Self.monotonicNanoseconds() }
        return .ok
    }

    /// Closes the bulb exposure (TerminateOpenCapture): how long it was open, in seconds,
    /// or `nil` when none was.
    func closeBulb() -> Double? {
        state.withLock { state in
            guard let opened = state.bulbOpenedAt else { return nil }
            state.bulbOpenedAt = nil
            let seconds = Double(Self.monotonicNanoseconds() - opened) / 1e9
            state.bulbSeconds = seconds
            return seconds
        }
    }

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// Whether the capture just taken makes no file (`--empty-captures`: those numbered).
    func lastCaptureIsEmpty() -> Bool {
        state.withLock { options.emptyCaptures.contains($0.captures) }
    }

    /// Whether the capture just taken finds the card full (`--card-fills-after N`: those
    /// after the Nth): it makes no file, and the camera says StoreFull.
    func cardFilledDuringLastCapture() -> Bool {
        state.withLock { state in options.cardFillsAfter.map { state.captures > $0 } ?? false }
    }

    /// Makes the files of the capture just accepted; returns their handles.
    func expose() -> [UInt32] {
        state.withLock { state in (0..<max(1, options.objectsPerCapture)).flatMap { _ in addShot(&state) } }
    }

    /// Whether the events of the capture just taken are to be lost (`--lose-events-of N`:
    /// those of capture N), as when a camera's firmware misses one.
    func losesEventsOfLastCapture() -> Bool {
        state.withLock { state in options.loseEventsOf == state.captures }
    }

    /// Whether to drop the connection instead of taking this capture: the capture after
    /// the `--drop-after`th, once, as a camera that goes away mid-shoot.
    func shouldDropBeforeCapture() -> Bool {
        state.withLock { state in
            guard let limit = options.dropAfter, !state.dropped, state.captures >= limit else { return false }
            state.dropped = true
            return true
        }
    }

    /// "iso 400 f/8 1/250 s": the exposure properties now.
    static func exposure(_ state: State) -> String {
        let iso = state.properties[0x500F]?.current ?? 0
        let fNumber = Double(state.properties[0x5007]?.current ?? 0) / 100
        let time = state.bulbSeconds ?? Double(state.properties[0x500D]?.current ?? 0) / 10_000
        let aperture = fNumber == fNumber.rounded() ? String(Int(fNumber)) : String(fNumber)
        let shutter = state.bulbSeconds != nil ? "bulb \(String(format: "%.3f", time))" : time >= 1 || time == 0 ? "\(Int(time))" : "1/\(Int((1 / time).rounded()))"
        return "iso \(iso) f/\(aperture) \(shutter) s"
    }

    /// A shot taken with the camera's own button.
    func pressButton() -> [UInt32] {
        state.withLock { addShot(&$0) }
    }

    private func addShot(_ state: inout State) -> [UInt32] {
        defer { state.bulbSeconds = nil }  // a bulb's length is its one exposure's
        state.imageCounter += 1
        let number = state.imageCounter
        let rawPlusJPEG = state.properties[0x5004]?.current == 1
        var files: [(String, UInt16, Payload)] = []
        if sources.isEmpty {
            // The exposure's settings as they were at the shot, as a camera records them in
            // its EXIF: tests see which values a capture was taken with.
            let comment = "shutterpipe-fakecam shot \(number) \(Self.exposure(state)) \(Date().timeIntervalSince1970)"
            let synthesised = chart.map { $0.jpeg(width: options.width, height: options.height, distance: lens.millimetres.load(ordering: .relaxed), comment: comment) }
                ?? SyntheticJPEG.make(width: options.width, height: options.height, shot: number, detail: options.detail, comment: comment)
            // The camera's EXIF right after SOI: what the exposure was taken with.
            let exif = CameraExif.segment(exposureTime: state.bulbSeconds ?? Double(state.properties[0x500D]?.current ?? 0) / 10_000, measured: state.bulbSeconds != nil,
                                          fNumber: Double(state.properties[0x5007]?.current ?? 0) / 100, iso: state.properties[0x500F]?.current ?? 0,
                                          focusMillimetres: chart == nil ? nil : lens.millimetres.load(ordering: .relaxed))
            let jpeg = synthesised.prefix(2) + exif + synthesised.dropFirst(2)
            if rawPlusJPEG {
                var raw = Data("SPRAW1\0".utf8)
                raw.append(Data("virtual raw of shot \(number)\n".utf8))
                raw.append(jpeg)
                files.append((String(format: "IMG_%04d.CR2", number), PTP.formatRaw, Payload(raw)))
            }
            files.append((String(format: "IMG_%04d.JPG", number), PTP.formatJPEG, Payload(jpeg)))
        } else {
            let index = state.sourceIndex % sources.count
            let url = sources[index]
            state.sourceIndex += 1
            // Mapped once and shared by every shot of it: a capture copies nothing, so the
            // virtual camera takes as little of the computer as a real one (benchmarks run
            // several on the machine they measure).
            if state.sourceBytes[index] == nil { state.sourceBytes[index] = (try? Data(contentsOf: url, options: .alwaysMapped)) ?? Data() }
            let source = state.sourceBytes[index] ?? Data()
            var data = Payload(source)
            // Distinct bytes per capture, even when the folder has one file: a COM segment.
            if source.count > 2 && source[source.startIndex] == 0xFF && source[source.startIndex + 1] == 0xD8 {
                let comment = Array("shutterpipe-fakecam shot \(number)".utf8)
                data = Payload([Data([0xFF, 0xD8, 0xFF, 0xFE, UInt8((comment.count + 2) >> 8), UInt8((comment.count + 2) & 0xFF)] + comment),
                                source.dropFirst(2)])
            }
            let ext = url.pathExtension.isEmpty ? "JPG" : url.pathExtension.uppercased()
            files.append((String(format: "IMG_%04d.%@", number, ext), ext == "JPG" || ext == "JPEG" ? PTP.formatJPEG : PTP.formatRaw, data))
        }
        if options.reuseNames {
            // The same name for every exposure; the comment grows by a byte a shot, so
            // that no two exposures are the same size.
            files = files.map { name, format, data in
                var payload = data
                if format == PTP.formatJPEG { payload = Payload([Data(data.bytes(in: 0..<2)), Self.comment(String(repeating: ".", count: number)), Data(data.bytes(in: 2..<data.count))]) }
                return (format == PTP.formatJPEG ? "capt0000.jpg" : "capt0000.cr2", format, payload)
            }
        }
        if options.ramCapture {
            // One object in the camera's memory, replaced by each exposure (JPEG only).
            let jpeg = files.last ?? ("capt0000.jpg", PTP.formatJPEG, Payload())
            state.objects[Self.ramHandle] = CardObject(handle: Self.ramHandle, parent: Self.folder, name: "capt0000.jpg", format: jpeg.1,
                                                       data: jpeg.2, captureDate: now)
            return [Self.ramHandle]
        }
        return files.map { name, format, data in
            let handle = state.nextHandle
            state.nextHandle += 1
            state.objects[handle] = CardObject(handle: handle, parent: Self.folder, name: name, format: format, data: data, captureDate: now)
            return handle
        }
    }

    /// The camera's clock: the computer's, `--clock-offset` seconds ahead.
    var now: Date { Date().addingTimeInterval(options.clockOffset) }

    /// The next live-view frame (``LiveViewFrames``).
    func liveViewFrame() -> Data {
        liveView.next()
    }

    /// The StreamInfo dataset of stream 1 (video): 36 bytes.
    func streamInfo() -> Data {
        var w = PTPWriter()
        w.u64(36); w.u64(1_000)  // DatasetSize, TimeResolution (ms)
        w.u32(0); w.u32(4_000_000)  // FrameHeaderSize, FrameMaxSize
        w.u32(0); w.u32(0); w.u32(0)  // PacketHeaderSize, PacketMaxSize, PacketAlignment
        return w.data
    }

    /// A JPEG COM segment holding `text`.
    static func comment(_ text: String) -> Data {
        let bytes = Array(text.utf8)
        return Data([0xFF, 0xFE, UInt8((bytes.count + 2) >> 8), UInt8((bytes.count + 2) & 0xFF)] + bytes)
    }
}
