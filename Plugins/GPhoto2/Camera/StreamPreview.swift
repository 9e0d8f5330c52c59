#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CStreamDecoder
import Foundation
import ShutterPipeImaging
import ShutterPipeSupport
import Synchronization

/// A camera JPEG's preview decoded while its bytes come off the wire (libjpeg with a
/// suspending source, scaled in the DCT: CStreamDecoder), so that a display has the sharp
/// picture a few milliseconds after the last byte instead of a whole decode after the file
/// is stored.
///
/// The download's thread only copies each piece in (``feed(_:)``); a thread of its own
/// decodes (CStreamDecoder: from the last byte on two threads), stepping down to nice 10
/// when the next download begins. Once the download has ended
/// (``finish()``) and the picture is whole, it is turned upright (the EXIF orientation in
/// the file's front), encoded, and handed to `made` on that thread. A damaged JPEG, or one
/// over the pixel budget, gives none.
final class StreamPreview: Sendable {
    /// The long edge of the preview: the page's.
    static let longEdge: Int32 = 1600
    /// The largest picture decoded (the page's default budget).
    static let maxPixels: Int64 = 200_000_000

    /// The download's pieces, on their way to the decoding thread: every one is needed, so
    /// none is dropped (a 10 MB photo is about 160 of them).
    private let pieces = ValueChannel<Data>(capacity: 1 << 20)
    /// The file's first 256 KiB (for its EXIF orientation), and the orientation the file
    /// says elsewhere (a RAW's IFD0, for its embedded JPEG).
    private let front = Mutex((bytes: Data(), orientation: Int?.none))
    private let finished = Atomic(false)
    private let made: @Sendable (Data) -> Void
    /// The file's name, for the log.
    private let name: String

    /// Whether the decoding thread is done with everything it was fed (for tests).
    var drained: Bool { finished.load(ordering: .acquiring) }

    /// The decoding thread's id, once it runs (for tests: its nice value).
    var decodingThread: Int32 { thread.load(ordering: .acquiring) }
    private let thread = Atomic<Int32>(0)

    /// The decoder at work: one at a time. A download that comes meanwhile (a burst, a
    /// sequence) gets no streamed preview rather than another copy of its bytes waiting in
    /// memory (the page decodes it from the photo), and the decoder at work steps down to
    /// nice 10 so that the download has the core (as it does when a capture begins:
    /// ``captureBegins()``).
    private static let active = Mutex<StreamBox?>(nil)

    /// `expected`: the file's size as the camera announced it, if it did: room for it is
    /// made at once.
    init?(name: String = "a download", expected: Int? = nil, made: @escaping @Sendable (Data) -> Void) {
        guard let stream = sp_stream_new(Self.longEdge, Self.maxPixels) else { return nil }
        if let expected, expected > 0 { sp_stream_expect(stream, expected) }
        let box = StreamBox(stream)
        let taken = Self.active.withLock { active -> Bool in
            if let busy = active {
                sp_stream_step_down(busy.stream)  // under the lock: its thread frees it only after clearing `active`
                return false
            }
            active = box
            return true
        }
        guard taken else {
            sp_stream_free(stream)
            return nil
        }
        self.made = made
        self.name = name
        OwnedThread.start("shutterpipe worker preview") { [self] in
            // At the worker's own priority: once the last byte is in, this decode is what the
            // page waits for, and a busy machine (a browser, other programs on the same two
            // cores) starved it at nice 10 (and at SCHED_IDLE before that). The next capture
            // or download steps it down (``sp_stream_step_down``), so a burst's or a
            // sequence's camera and transfers still go first.
            thread.store(sp_thread_id(), ordering: .releasing)
            decode(box.stream)
            Self.active.withLock { $0 = nil }
            sp_stream_free(box.stream)
            finished.store(true, ordering: .releasing)
        }
    }

    /// A capture begins: a preview still being decoded (a burst's, a sequence's) steps down
    /// to nice 10, so that the camera, the next transfer and the store go first. A single
    /// shot's decode is long over by the next capture.
    static func captureBegins() {
        active.withLock { active in
            if let busy = active { sp_stream_step_down(busy.stream) }
        }
    }

    /// The next piece of the file; returns at once.
    func feed(_ bytes: UnsafeRawBufferPointer) {
        let piece = Data(bytes)
        front.withLock { front in
            if front.bytes.count < 256 << 10 { front.bytes.append(piece.prefix((256 << 10) - front.bytes.count)) }
        }
        pieces.send(piece)
    }

    /// Turns the preview by `orientation` (EXIF 1-8) rather than by what the fed JPEG says:
    /// a RAW's embedded JPEG takes the RAW's.
    func orient(_ orientation: Int) {
        front.withLock { $0.orientation = orientation }
    }

    /// The download has ended: the preview follows when the picture is whole (it may be
    /// out already, made at the JPEG's end marker).
    func finish() {
        pieces.finish()
    }

    private func decode(_ stream: OpaquePointer) {
        var result: Int32 = 1
        func feed(_ piece: Data) {
            guard result == 1 else { return }  // whole (the tail is not needed) or failed: the rest is only drained
            result = piece.withUnsafeBytes { sp_stream_feed(stream, $0.bindMemory(to: UInt8.self).baseAddress, $0.count) }
        }
        // Until the picture's last byte is in (its entropy data's end marker came) or the
        // download has ended: a little decoding at a time, taking every piece that came
        // meanwhile, so that the last byte finds the decoder ready to split what is left
        // across two threads (sp_stream_end) rather than deep in one long run.
        taking: while true {
            draining: while true {
                switch pieces.receive(until: .now) {
                case .value(let piece): feed(piece)
                case .closed: break taking
                case .timedOut: break draining
                }
            }
            if result == 1 {
                let step = sp_stream_step(stream)
                if step == 1 { continue }  // more of what came waits
                if step == 3 { break taking }  // the picture's last byte is in: the rest now, not at the download's end
                if step != 0 { result = step }
            }
            // Nothing to decode until the next piece.
            switch pieces.receive() {
            case .value(let piece): feed(piece)
            case .closed, .timedOut: break taking
            }
        }
        let lastByte = ContinuousClock.now
        if result == 1 { result = sp_stream_end(stream) }
        // Whatever else comes (a RAW's tail, the bytes after a JPEG's end) is only drained,
        // after the preview is out: the decoder stays the one at work until the download ends.
        defer { while case .value = pieces.receive() {} }
        guard result == 2 else { return WorkerLog.debug("\(name): no streamed preview (a damaged or cut-short JPEG, or one over the budget)") }
        let (kept, given) = front.withLock { ($0.bytes, $0.orientation) }
        let upright = given ?? kept.withUnsafeBytes { ExifThumbnail.orientation(in: $0) }
        var out: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let decoded = ContinuousClock.now
        guard sp_stream_jpeg(stream, Int32(upright), 85, &out, &size) == 0, let out else { return }
        let jpeg = Data(bytes: out, count: Int(size))
        free(out)
        var total = 0
        let joined = sp_stream_joined_at(stream, &total)
        let how = joined == 0 ? "by libjpeg" : joined == 1 ? "on one thread" : "on two threads, joined at MCU \(joined) of \(total)"
        let milliseconds = { (from: ContinuousClock.Instant) in Int(from.duration(to: .now).milliseconds.rounded()) }
        WorkerLog.debug("\(name): preview decoded \(how), ready \(milliseconds(lastByte)) ms after the last byte (encoding: \(milliseconds(decoded)) ms)")
        made(jpeg)
    }
}

/// The decoder's handle, handed to its thread.
/// The decoding thread alone decodes and frees it; another thread only asks it to step
/// down (`sp_stream_step_down`, an atomic store), under `active`'s lock, which the decoding
/// thread clears before it frees the stream.
private struct StreamBox: @unchecked Sendable {
    let stream: OpaquePointer
    init(_ stream: OpaquePointer) { self.stream = stream }
}
