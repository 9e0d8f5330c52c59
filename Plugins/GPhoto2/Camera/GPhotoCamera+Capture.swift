import CGPhoto2
import Foundation
import ShutterPipeImaging
import ShutterPipeSupport
import GPhoto2Backend

/// Capture, the files of an exposure, events, download and delete.
extension GPhotoCamera {
    /// A file the camera announced (ObjectAdded), with what its object info says, to tell
    /// a second announcement of the same object from a new object given the same name.
    struct AddedFile: Equatable {
        var path: CameraPath
        var size: Int?
        var modified: Int?
        /// Whether `modified` is the camera's own time (its object info, as a listing gives
        /// it). libgphoto2 gives a file that an event brought (a capture, a button shot)
        /// the computer's clock at that moment instead, which no later listing repeats: a
        /// body's clock is set by hand.
        var timeIsCameras = true
        /// `modified` where it is the camera's own time; nil for the computer's.
        var cameraTime: Int? { timeIsCameras ? modified : nil }
    }

    /// What one exposure made, and the button shots announced before it fired.
    struct Exposure {
        var files: [AddedFile] = []
        var earlier: [AddedFile] = []
    }

    /// After CaptureComplete with no file yet, how long the first ObjectAdded is waited for
    /// (some cameras send it after CaptureComplete).
    /// A second: libgphoto2's own capture gives up at once; a file that comes later still
    /// is not lost (it is stored as a shot from the camera's button).
    static let firstFileWait: Duration = .seconds(1)
    /// With files but no CaptureComplete, the silence after which the exposure is taken as
    /// done (cameras that never send it).
    static let quietAfterFiles: Duration = .seconds(1)

    /// Takes a picture the standard way, as `gphoto2 --trigger-capture
    /// --wait-event-and-download` does: InitiateCapture, then an ObjectAdded per file until
    /// CaptureComplete. So every file of the exposure comes, whatever their number
    /// (RAW+JPEG, bracketing, continuous drive); `gp_camera_capture` reports only the
    /// last. An event that cannot be handled costs only itself, with a log line.
    ///
    /// `meanwhile` runs while the exposure's events are awaited, at most every 30 ms: the
    /// live-view frames and delete requests that come during a long exposure.
    ///
    /// With `bulb`, the shutter is opened with the first of those controls the camera
    /// takes and held open for that long (``holdOpen(with:for:)``) instead of
    /// InitiateCapture; the files come the same way.
    func capture(bulb: (controls: [String], exposure: Duration)? = nil, meanwhile: () -> Void = {}) throws(GPhotoFailure) -> Exposure {
        var exposure = Exposure()
        // What was announced before the order is not this exposure's (a millisecond when
        // nothing is pending).
        for _ in 0..<8 {
            guard let event = try nextEventLoggingFailures(timeoutMilliseconds: 1) else { break }
            if case .fileAdded(let file) = event { exposure.earlier.append(file) }
        }
        if let bulb {
            let (control, held) = try holdOpen(with: bulb.controls, for: bulb.exposure)
            let milliseconds = Double(held.components.seconds) * 1000 + Double(held.components.attoseconds) / 1e15
            WorkerLog.info("bulb: held open \(String(format: "%.1f", milliseconds)) ms with '\(control)' (asked \(formatDuration(bulb.exposure)))")
        } else {
            try check(gp_camera_trigger_capture(camera, context), "capturing")
        }
        var completed: ContinuousClock.Instant?
        var lastFile: ContinuousClock.Instant?
        var lastMeanwhile = ContinuousClock.now
        while true {
            let now = ContinuousClock.now
            if let completed, exposure.files.isEmpty, now - completed > Self.firstFileWait { break }
            if completed == nil, let lastFile, now - lastFile > Self.quietAfterFiles { break }
            // Complete, with files: only what is already queued still counts, no waiting.
            let done = completed != nil && !exposure.files.isEmpty
            let event = try nextEventLoggingFailures(timeoutMilliseconds: done ? 1 : 20)
            if done && event == nil { break }
            if event == nil, ContinuousClock.now - lastMeanwhile > .milliseconds(30) {
                meanwhile()
                lastMeanwhile = .now
            }
            switch event {
            case .fileAdded(let file)?:
                if !exposure.files.contains(where: { $0.path == file.path }) { exposure.files.append(file) }  // announced twice
                lastFile = .now
            case .captureComplete?:
                if completed == nil { completed = .now }
            case .endsCapture(let ending)?:
                // The camera said why no file comes (a full card, say): answered at once.
                if exposure.files.isEmpty { throw ending.failure }
                WorkerLog.warning("after this exposure's files, the camera said: \(ending.failure.detail ?? "")")
            case .other?, nil:
                continue
            }
        }
        return exposure
    }

    /// ``nextEvent(timeoutMilliseconds:)``, but an event that fails (an object that does not
    /// exist, say) is logged and skipped, unless the camera stopped answering.
    func nextEventLoggingFailures(timeoutMilliseconds: Int32 = 10) throws(GPhotoFailure) -> Event? {
        do {
            return try nextEvent(timeoutMilliseconds: timeoutMilliseconds)
        } catch {
            if error.lostConnection || !responds() { throw error }
            WorkerLog.warning("a camera event could not be handled, skipped: \(error)")
            return .other
        }
    }

    /// What `wait_for_event` reported.
    enum Event: Equatable {
        case fileAdded(AddedFile)
        case captureComplete
        /// An event that ends a capture without a file.
        case endsCapture(Ending)
        case other
    }

    /// The PTP events that end a capture without a file. libgphoto2 passes them on as
    /// "unknown" events with a text: `PTP Event 400a, Param1 …`, `PTP StoreRemoved, …`.
    enum Ending: Equatable {
        /// StoreFull (0x400A): the card ran full during the capture.
        case storeFull
        /// StoreRemoved: the card was taken out.
        case storeRemoved
        /// CancelTransaction (0x4001): the camera gave the capture up.
        case cancelled

        init?(eventText text: String) {
            let lowered = text.lowercased()
            if lowered.hasPrefix("ptp event 400a") { self = .storeFull }
            else if lowered.hasPrefix("ptp storeremoved") { self = .storeRemoved }
            else if lowered.hasPrefix("ptp event 4001") { self = .cancelled }
            else { return nil }
        }

        /// The failure the capture ends with (``CameraSession`` turns it into the answer's cause).
        var failure: GPhotoFailure {
            switch self {
            case .storeFull: GPhotoFailure(code: GP_ERROR_NO_SPACE, operation: "capture", detail: "the camera said its card ran full (PTP StoreFull)")
            case .storeRemoved: GPhotoFailure(code: GP_ERROR_NO_SPACE, operation: "capture", detail: "the camera said its card was removed (PTP StoreRemoved)")
            case .cancelled: GPhotoFailure(code: GP_ERROR_CANCEL, operation: "capture", detail: "the camera cancelled the capture (PTP CancelTransaction)")
            }
        }
    }

    /// One event from the camera, or `nil` when there was none. (On PTP/IP this polls
    /// once, about a millisecond whatever the timeout, measured with libgphoto2 2.5.30;
    /// callers loop against their own deadline.)
    func nextEvent(timeoutMilliseconds: Int32) throws(GPhotoFailure) -> Event? {
        var type = GP_EVENT_UNKNOWN
        var data: UnsafeMutableRawPointer?
        try check(gp_camera_wait_for_event(camera, timeoutMilliseconds, &type, &data, context), "waiting for camera events")
        defer { free(data) }
        switch type {
        case GP_EVENT_TIMEOUT: return nil
        case GP_EVENT_CAPTURE_COMPLETE: return .captureComplete
        case GP_EVENT_UNKNOWN:
            guard let data else { return .other }
            return Ending(eventText: String(cString: data.assumingMemoryBound(to: CChar.self))).map { .endsCapture($0) } ?? .other
        case GP_EVENT_FILE_ADDED:
            guard let data else { return .other }
            let path = Self.cameraPath(data.assumingMemoryBound(to: CameraFilePath.self))
            // libgphoto2 has just filled its cache with this object's info: no camera round trip.
            let info = self.info(path)
            return .fileAdded(AddedFile(path: path, size: info?.size, modified: info?.modified, timeIsCameras: false))
        default: return .other
        }
    }

    /// Downloads a file into `descriptor` (an in-memory file the backend maps). Returns
    /// the size.
    ///
    /// The bytes arrive through a ``DownloadTarget``, libgphoto2's file handler: the
    /// driver hands over each piece as it comes off the wire (a PTP/IP data packet, a USB
    /// read, a partial-object block), and the target writes it into the descriptor and
    /// tells `progress` the bytes so far. libgphoto2's context progress functions are not
    /// used for this: only its USB transport calls them, in blocks of its own unit.
    ///
    /// `thumbnail` hears, once, the small JPEG at the front of the file (``ExifThumbnail``)
    /// as soon as its bytes are in: a display paints it long before the file is whole.
    ///
    /// `preview` hears, once, the file's sharp preview decoded while its bytes arrived
    /// (``StreamPreview``: a JPEG's, or the largest JPEG a TIFF-based RAW embeds,
    /// ``RawPreviewWindow``), on a thread of its own, shortly after the download. Returns
    /// the size, and whether such a preview is being made (one at a time: in a burst a
    /// download may get none). `expected`, the size the camera announced, lets the preview's
    /// decoder make room for the bytes at once.
    func download(_ path: CameraPath, into descriptor: Int32, progress: @escaping (Int64) -> Void = { _ in },
                  thumbnail: ((Data) -> Void)? = nil, preview: (@Sendable (Data) -> Void)? = nil,
                  expected: Int? = nil) throws(GPhotoFailure) -> (size: Int, previewFollows: Bool) {
        let kind = PathName.fileExtension(path.name).lowercased()
        let isJPEG = ["jpg", "jpeg"].contains(kind)
        // TIFF-based RAWs: their largest embedded JPEG is streamed (CR3 and RAF are not TIFF).
        let isRAW = ["dng", "cr2", "nef", "nrw", "arw", "srf", "sr2", "pef", "orf", "rw2", "erf", "3fr", "iiq"].contains(kind)
        let stream = isJPEG || isRAW ? preview.flatMap { StreamPreview(name: path.name, expected: isJPEG ? expected : nil, made: $0) } : nil
        defer { stream?.finish() }
        let target = DownloadTarget(descriptor: descriptor, progress: progress, thumbnail: thumbnail, stream: stream, raw: isRAW)
        var file: OpaquePointer?
        try check(gp_file_new_from_handler(&file, DownloadTarget.handler, Unmanaged.passUnretained(target).toOpaque()), "preparing a download")
        defer { gp_file_unref(file) }
        try withExtendedLifetime(target) { () throws(GPhotoFailure) in
            try check(gp_camera_file_get(camera, path.folder, path.name, GP_FILE_TYPE_NORMAL, file, context), "downloading \(path.name)")
        }
        if let failure = target.failure { throw GPhotoFailure(code: GP_ERROR_IO_WRITE, operation: "downloading \(path.name)", detail: failure) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw GPhotoFailure(code: GP_ERROR_IO, operation: "downloading \(path.name)", detail: "fstat failed") }
        return (Int(info.st_size), stream != nil)
    }

    /// The size the camera announced for a file (its ObjectInfo), if it says.
    func announcedSize(_ path: CameraPath) -> Int? {
        info(path)?.size
    }

    /// A file's size and modification time (seconds), as far as the camera says.
    func info(_ path: CameraPath) -> (size: Int?, modified: Int?)? {
        var info = CameraFileInfo()
        guard gp_camera_file_get_info(camera, path.folder, path.name, &info, context) == GP_OK else { return nil }
        let fields = info.file.fields.rawValue
        return (fields & GP_FILE_INFO_SIZE.rawValue != 0 ? Int(info.file.size) : nil,
                fields & GP_FILE_INFO_MTIME.rawValue != 0 ? Int(info.file.mtime) : nil)
    }

    /// One live-view frame (`gp_camera_capture_preview`), written into `descriptor`;
    /// returns its size.
    func capturePreview(into descriptor: Int32) throws(GPhotoFailure) -> Int {
        var file: OpaquePointer?
        try check(gp_file_new_from_fd(&file, dup(descriptor)), "preparing a live-view frame")
        defer { gp_file_unref(file) }
        try check(gp_camera_capture_preview(camera, file, context), "live view")
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw GPhotoFailure(code: GP_ERROR_IO, operation: "live view", detail: "fstat failed") }
        return Int(info.st_size)
    }

    /// Drops libgphoto2's cached listings and file bytes: a name used again must be
    /// looked up and fetched afresh, not served from what the earlier file left.
    func forgetCachedFiles() {
        if let camera { gp_filesystem_reset(camera.pointee.fs) }
    }

    /// Deletes a file from the card.
    func delete(_ path: CameraPath) throws(GPhotoFailure) {
        try check(gp_camera_file_delete(camera, path.folder, path.name, context), "deleting \(path.name) from the card")
    }
}
