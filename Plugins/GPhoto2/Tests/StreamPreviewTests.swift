#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Dispatch
import Foundation
import ShutterPipeImaging
@testable import GPhoto2Camera
import ShutterPipeSupport
import Synchronization
import Testing
import TestSupport

@Suite("camera worker: a JPEG's preview decoded while it downloads", .serialized, .timeLimit(.minutes(2)))
struct StreamPreviewTests {
    /// Feeds `file` in pieces of `piece` bytes, as a download would, and waits (off the pool)
    /// for the preview.
    static func preview(of file: Data, piece: Int) async throws -> Data? {
        let made = Mutex<Data?>(nil)
        let arrived = DispatchSemaphore(value: 0)
        let stream = try #require(StreamPreview { jpeg in made.withLock { $0 = jpeg }; arrived.signal() })
        var offset = 0
        while offset < file.count {
            let end = min(file.count, offset + piece)
            file[offset..<end].withUnsafeBytes { stream.feed($0) }
            offset = end
        }
        stream.finish()
        _ = try await offThePool { arrived.wait(timeout: .now() + 60) }
        return made.withLock { $0 }
    }

    @Test("a portrait camera JPEG (EXIF orientation 6) fed in 7 KiB pieces: the preview is upright, the size the page shows (the long edge at most 1600 px), and Pillow finds it the photo turned by its orientation")
    func upright() async throws {
        let folder = TemporaryDirectory("stream-preview")
        let photo = folder.file("photo.jpg")
        _ = try await runProgram(["/usr/bin/python3", "\(repositoryRoot)/Tests/Browser/pixels.py", "tagged", photo, "2400", "1600", "6"])
        let jpeg = try #require(try await Self.preview(of: Data(contentsOf: URL(fileURLWithPath: photo)), piece: 7 * 1024))
        let made = folder.file("preview.jpg")
        try jpeg.writeTestFile(made)
        // 2400×1600 at 1/2 is 1200×800; turned upright by orientation 6: 800×1200.
        let shape = try await runProgram(["/usr/bin/python3", "-c", "import sys; from PIL import Image; print(Image.open(sys.argv[1]).size)", made])
        #expect(shape.text.trimmingCharacters(in: .whitespacesAndNewlines) == "(800, 1200)", "\(shape.text)")
        // The photo upright, halved by Pillow, against the preview: the same picture.
        let halved = folder.file("halved.png")
        _ = try await runProgram(["/usr/bin/python3", "-c", "import sys; from PIL import Image, ImageOps; ImageOps.exif_transpose(Image.open(sys.argv[1])).convert('RGB').resize((800, 1200)).save(sys.argv[2])", photo, halved])
        let compared = try await runProgram(["/usr/bin/python3", "\(repositoryRoot)/Tests/Browser/pixels.py", "compare", made, "0", "0", halved, "0", "0", "800", "1200"])
        let mean = (try JSONSerialization.jsonObject(with: compared.data) as? [String: Any])?["mean"] as? Double ?? 255
        #expect(mean < 6, "mean difference per value \(mean)")
    }

    @Test("one decoder at a time: a download that comes while one is at work gets none (its bytes never wait twice in memory), and the next after it does")
    func oneAtATime() async throws {
        let ignore: @Sendable (Data) -> Void = { _ in }
        let first = try #require(StreamPreview(made: ignore))
        let second = StreamPreview(made: ignore)
        #expect(second == nil)
        first.finish()
        #expect(await eventually { first.drained })
        let next = try #require(StreamPreview(made: ignore))
        next.finish()
        #expect(await eventually { next.drained })
    }

    @Test("a download or a capture that begins while a preview is decoded steps that decoder down to nice 10 (it started at the worker's own), so that a burst's or a sequence's camera and transfers keep their core",
          .enabled(if: Self.processNice() < 10, "this test process runs at nice 10 or more: a step down to 10 would not show"),
          arguments: ["download", "capture"])
    func stepsDownForTheNextShot(asking: String) async throws {
        let folder = TemporaryDirectory("stream-preview-step-down")
        let photo = folder.file("photo.jpg")
        _ = try await runProgram(["/usr/bin/python3", "\(repositoryRoot)/Tests/Browser/pixels.py", "noise", photo, "4000", "3000"])
        let file = try Data(contentsOf: URL(fileURLWithPath: photo))
        let ignore: @Sendable (Data) -> Void = { _ in }
        let first = try #require(StreamPreview(name: "first", made: ignore))
        let half = file.count / 2
        file[..<half].withUnsafeBytes { first.feed($0) }
        // At the test process's own nice (0 unless something started it nicer), then 10.
        let own = Self.processNice()
        #expect(await eventually { Self.nice(of: first.decodingThread) == own }, "nice \(String(describing: Self.nice(of: first.decodingThread)))")
        if asking == "download" {
            #expect(StreamPreview(name: "second", made: ignore) == nil)
        } else {
            StreamPreview.captureBegins()
        }
        // It moves itself at its next piece.
        file[half...].withUnsafeBytes { first.feed($0) }
        #expect(await eventually { Self.nice(of: first.decodingThread) == 10 }, "nice \(String(describing: Self.nice(of: first.decodingThread)))")
        first.finish()
        #expect(await eventually { first.drained })
    }

    @Test("a camera JPEG's preview comes once its last byte is in (its end marker), before the download ends: a RAW's embedded JPEG or a slow camera's last call does not hold it")
    func beforeTheDownloadEnds() async throws {
        let folder = TemporaryDirectory("stream-preview-early")
        let photo = folder.file("photo.jpg")
        _ = try await runProgram(["/usr/bin/python3", "\(repositoryRoot)/Tests/Browser/pixels.py", "noise", photo, "4000", "3000"])
        let file = try Data(contentsOf: URL(fileURLWithPath: photo))
        let made = Mutex<Data?>(nil)
        let handler: @Sendable (Data) -> Void = { jpeg in made.withLock { $0 = jpeg } }
        let stream = try #require(StreamPreview(name: "early", expected: file.count, made: handler))
        var offset = 0
        while offset < file.count {
            let end = min(file.count, offset + 256 << 10)
            file[offset..<end].withUnsafeBytes { stream.feed($0) }
            offset = end
        }
        // Not finished: the download is still "under way".
        #expect(await eventually(timeout: .seconds(20)) { made.withLock { $0 } != nil }, "no preview before the download's end")
        #expect(!stream.drained)
        stream.finish()
        #expect(await eventually { stream.drained })
    }

    /// The nice value of the calling thread (this process's, unless a thread changed its own).
    static func processNice() -> Int { Int(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)) }

    /// A thread of this process's nice value (field 19 of its /proc stat).
    static func nice(of thread: Int32) -> Int? {
        guard thread > 0, let stat = try? String(contentsOfFile: "/proc/self/task/\(thread)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // After the name: the state (field 3), then the rest in order; the nice value is 19.
        let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
        return fields.count > 16 ? Int(fields[16]) : nil
    }

    @Test("a damaged JPEG, one that ends early, and bytes that are no JPEG give no preview and no crash")
    func damaged() async throws {
        let folder = TemporaryDirectory("stream-preview-damaged")
        let photo = folder.file("photo.jpg")
        _ = try await runProgram(["/usr/bin/python3", "\(repositoryRoot)/Tests/Browser/pixels.py", "tagged", photo, "640", "480", "1"])
        let file = try Data(contentsOf: URL(fileURLWithPath: photo))
        #expect(try await Self.previewOrNone(of: file.prefix(file.count / 2)) == nil)
        #expect(try await Self.previewOrNone(of: Data("not a jpeg at all".utf8)) == nil)
        var garbled = file
        for index in stride(from: 600, to: garbled.count - 2, by: 97) { garbled[index] = 0xFF }
        _ = try await Self.previewOrNone(of: garbled)  // may or may not make one: it must not crash
    }

    /// The preview, or nil once the decoder has had everything and made none.
    static func previewOrNone(of file: Data) async throws -> Data? {
        let made = Mutex<Data?>(nil)
        let handler: @Sendable (Data) -> Void = { jpeg in made.withLock { $0 = jpeg } }
        let stream = try #require(StreamPreview(made: handler), "one decoder at a time: the last one is done")
        file.withUnsafeBytes { stream.feed($0) }
        stream.finish()
        // The decoder's thread ends once it has drained what it was fed; it made one or not.
        #expect(await eventually { stream.drained })
        return made.withLock { $0 }
    }
}

extension StreamPreviewTests {
    @Test("a DNG downloading in 7 KiB pieces: the JPEG it embeds (after the sensor's data) is found from the file's front and decoded as its bytes come, turned upright by the RAW's own orientation (6), Pillow's picture of the same JPEG turned; a DNG without one gives none")
    func rawEmbeddedPreview() async throws {
        let folder = TemporaryDirectory("stream-preview-raw")
        let embedded = folder.file("embedded.jpg"), raw = folder.file("IMG_0001.DNG"), bare = folder.file("IMG_0002.DNG")
        _ = try await runProgram(["/usr/bin/python3", "\(repositoryRoot)/Tests/Browser/pixels.py", "tagged", embedded, "2400", "1600", "1"])
        _ = try await runProgram(["/usr/bin/python3", "\(repositoryRoot)/Tests/RawSamples/make_dng.py", raw, "--width", "600", "--height", "400", "--preview", embedded, "--orientation", "6"])
        _ = try await runProgram(["/usr/bin/python3", "\(repositoryRoot)/Tests/RawSamples/make_dng.py", bare, "--width", "600", "--height", "400"])
        let file = try Data(contentsOf: URL(fileURLWithPath: raw))
        let jpeg = try Data(contentsOf: URL(fileURLWithPath: embedded))
        // The window is the embedded JPEG's bytes exactly; the front alone says where.
        guard case .found(let range, let orientation) = file.withUnsafeBytes({ RawPreviewWindow.locate($0) }) else {
            Issue.record("no window in the DNG"); return
        }
        #expect(file[range] == jpeg && orientation == 6)
        // Cut short inside IFD0: more bytes are asked for.
        if case .needs(let more) = file.prefix(40).withUnsafeBytes({ RawPreviewWindow.locate($0) }) {
            #expect(more > 40 && more < 4096)
        } else {
            Issue.record("a front cut inside IFD0 asked for no more bytes")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: bare)).withUnsafeBytes { RawPreviewWindow.locate($0) } == .none)
        #expect(jpeg.withUnsafeBytes { RawPreviewWindow.locate($0) } == .none)

        let made = try #require(try await Self.download(file, piece: 7 * 1024))
        let preview = folder.file("preview.jpg")
        try made.writeTestFile(preview)
        let shape = try await runProgram(["/usr/bin/python3", "-c", "import sys; from PIL import Image; print(Image.open(sys.argv[1]).size)", preview])
        #expect(shape.text.trimmingCharacters(in: .whitespacesAndNewlines) == "(800, 1200)", "\(shape.text)")
        let turned = folder.file("turned.png")
        _ = try await runProgram(["/usr/bin/python3", "-c", "import sys; from PIL import Image; Image.open(sys.argv[1]).convert('RGB').transpose(Image.Transpose.ROTATE_270).resize((800, 1200)).save(sys.argv[2])", embedded, turned])
        let compared = try await runProgram(["/usr/bin/python3", "\(repositoryRoot)/Tests/Browser/pixels.py", "compare", preview, "0", "0", turned, "0", "0", "800", "1200"])
        let mean = (try JSONSerialization.jsonObject(with: compared.data) as? [String: Any])?["mean"] as? Double ?? 255
        #expect(mean < 6, "mean difference per value \(mean)")
        #expect(try await Self.download(Data(contentsOf: URL(fileURLWithPath: bare)), piece: 7 * 1024) == nil)
    }

    @Test("a RAW's front damaged at random (offsets past the end, loops, huge counts): the window is found, needs more, or is none; never a crash or a read out of bounds")
    func rawFrontDamaged() async throws {
        let folder = TemporaryDirectory("stream-preview-raw-damaged")
        let embedded = folder.file("embedded.jpg"), raw = folder.file("IMG_0001.DNG")
        _ = try await runProgram(["/usr/bin/python3", "\(repositoryRoot)/Tests/Browser/pixels.py", "tagged", embedded, "320", "200", "1"])
        _ = try await runProgram(["/usr/bin/python3", "\(repositoryRoot)/Tests/RawSamples/make_dng.py", raw, "--width", "64", "--height", "48", "--preview", embedded])
        let file = try Data(contentsOf: URL(fileURLWithPath: raw))
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var damaged = file.prefix(1024)
            for _ in 0..<8 { damaged[Int.random(in: 0..<damaged.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            switch damaged.withUnsafeBytes({ RawPreviewWindow.locate($0) }) {
            case .found(let range, let orientation): #expect(range.lowerBound >= 0 && !range.isEmpty && (1...8).contains(orientation))
            case .needs(let bytes): #expect(bytes > damaged.count && bytes <= RawPreviewWindow.scanned)
            case .none: break
            }
        }
    }

    /// Feeds `file` through a download's target (a RAW's name), in pieces, and waits (off
    /// the pool) for the preview its stream makes; nil when none comes.
    static func download(_ file: Data, piece: Int) async throws -> Data? {
        let made = Mutex<Data?>(nil)
        let arrived = DispatchSemaphore(value: 0)
        let stream = try #require(StreamPreview { jpeg in made.withLock { $0 = jpeg }; arrived.signal() })
        let folder = TemporaryDirectory("raw-download")
        let memory = open(folder.file("download"), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        defer { close(memory) }
        let target = DownloadTarget(descriptor: memory, progress: { _ in }, stream: stream, raw: true)
        var bytes = [UInt8](file)
        var offset = 0
        while offset < bytes.count {
            let count = min(piece, bytes.count - offset)
            let status = bytes.withUnsafeMutableBufferPointer { target.write($0.baseAddress! + offset, count: count) }
            #expect(status == 0)
            offset += count
        }
        stream.finish()
        // Drained: the decoding thread is done with what it was fed (a preview or none).
        #expect(await eventually(timeout: .seconds(60)) { stream.drained })
        _ = try await offThePool { arrived.wait(timeout: .now()) }
        return made.withLock { $0 }
    }
}
