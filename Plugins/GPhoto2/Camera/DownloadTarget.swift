#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CGPhoto2
import Foundation
import ShutterPipeImaging
import ShutterPipeSupport

/// Where a download's bytes go: libgphoto2's `CameraFileHandler`, writing each piece the
/// driver hands over into an in-memory file and counting it. Confined to the camera
/// thread, which is where libgphoto2 calls it back.
final class DownloadTarget {
    let descriptor: Int32
    let progress: (Int64) -> Void
    private(set) var written: Int64 = 0
    /// Why a write failed; libgphoto2 only learns that it did.
    private(set) var failure: String?

    /// The thumbnail's listener, until it heard it or the file has none.
    private var thumbnail: ((Data) -> Void)?
    /// The file's first bytes, while the thumbnail is looked for.
    private var front = Data()
    /// How many of them decide the next look.
    private var needed = 4

    /// The preview decoded as the bytes arrive, if one is wanted.
    private let stream: StreamPreview?
    /// For a RAW: its front, kept while its embedded JPEG is looked for (``RawPreviewWindow``);
    /// `nil` for a JPEG, whose every byte is the stream's.
    private var rawFront: Data?
    /// For a RAW: where its embedded JPEG is, once found; only those bytes are the stream's.
    private var window: Range<Int>?

    /// `raw`: the file is a RAW, whose embedded JPEG is streamed (a JPEG's bytes all are).
    init(descriptor: Int32, progress: @escaping (Int64) -> Void, thumbnail: ((Data) -> Void)? = nil, stream: StreamPreview? = nil, raw: Bool = false) {
        self.descriptor = descriptor
        self.progress = progress
        self.thumbnail = thumbnail
        self.stream = stream
        self.rawFront = raw && stream != nil ? Data() : nil
    }

    /// Hands the stream the piece of the file at `start`: all of a JPEG; of a RAW, what
    /// lies in its embedded JPEG, once the front said where that is.
    private func feed(_ piece: UnsafeRawBufferPointer, at start: Int) {
        guard let stream else { return }
        guard var front = rawFront else {
            if let window {
                let from = max(window.lowerBound, start), to = min(window.upperBound, start + piece.count)
                if from < to { stream.feed(UnsafeRawBufferPointer(rebasing: piece[(from - start)..<(to - start)])) }
            } else {
                stream.feed(piece)
            }
            return
        }
        front.append(contentsOf: piece.prefix(RawPreviewWindow.scanned - front.count))
        switch front.withUnsafeBytes({ RawPreviewWindow.locate($0) }) {
        case .found(let range, let orientation):
            rawFront = nil
            window = range
            stream.orient(orientation)
            // What of it came already: from the front (the rest of this piece beyond it too).
            let kept = min(range.upperBound, front.count)
            if range.lowerBound < kept { front[range.lowerBound..<kept].withUnsafeBytes { stream.feed($0) } }
            let end = start + piece.count
            if end > front.count, range.upperBound > front.count {
                let from = max(range.lowerBound, front.count), to = min(range.upperBound, end)
                if from < to { stream.feed(UnsafeRawBufferPointer(rebasing: piece[(from - start)..<(to - start)])) }
            }
        case .needs(let bytes) where bytes <= RawPreviewWindow.scanned && front.count < RawPreviewWindow.scanned:
            rawFront = front
        default:
            // No JPEG to stream: the stream gets nothing and makes no preview.
            rawFront = nil
            window = 0..<0
        }
    }

    /// Keeps the front of the file until the thumbnail is found (or known to be absent),
    /// and hands it over then.
    private func lookForThumbnail(_ data: UnsafeMutablePointer<UInt8>, count: Int) {
        guard let listener = thumbnail else { return }
        front.append(data, count: min(count, ExifThumbnail.scanned - front.count))
        guard front.count >= needed else { return }
        switch front.withUnsafeBytes({ ExifThumbnail.find(in: $0) }) {
        case .at(let range):
            thumbnail = nil
            listener(front.subdata(in: range))
            front = Data()
        case .needs(let more) where more <= ExifThumbnail.scanned:
            needed = more
        default:
            thumbnail = nil
            front = Data()
        }
    }

    /// The handler table: libgphoto2 keeps the pointer, not a copy, so there is one for
    /// the life of the process.
    nonisolated(unsafe) static let handler: UnsafeMutablePointer<CameraFileHandler> = {
        let table = UnsafeMutablePointer<CameraFileHandler>.allocate(capacity: 1)
        table.initialize(to: CameraFileHandler(
            size: { private_, size in
                guard let private_, let size else { return GP_ERROR_BAD_PARAMETERS }
                size.pointee = UInt64(Unmanaged<DownloadTarget>.fromOpaque(private_).takeUnretainedValue().written)
                return GP_OK
            },
            read: { _, _, _ in GP_ERROR_NOT_SUPPORTED },
            write: { private_, data, length in
                guard let private_, let data, let length else { return GP_ERROR_BAD_PARAMETERS }
                return Unmanaged<DownloadTarget>.fromOpaque(private_).takeUnretainedValue().write(data, count: Int(length.pointee))
            }))
        return table
    }()

    func write(_ data: UnsafeMutablePointer<UInt8>, count: Int) -> Int32 {
        var done = 0
        while done < count {
            let result = Glibc.write(descriptor, data + done, count - done)
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else {
                failure = "writing the download into memory: \(String(cString: strerror(errno)))"
                return GP_ERROR_IO_WRITE
            }
            done += result
        }
        written += Int64(count)
        // The report first: the session knows the file is this shot's before the thumbnail
        // found in these bytes comes (a camera that reuses names would have it taken for
        // the earlier shot's late preview otherwise).
        progress(written)
        lookForThumbnail(data, count: count)
        feed(UnsafeRawBufferPointer(start: data, count: count), at: Int(written) - count)
        return GP_OK
    }
}
