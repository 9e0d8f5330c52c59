import CStreamDecoder
import Foundation
import Testing
import TestSupport

/// The camera worker's preview decoder (CStreamDecoder): a baseline JPEG's entropy decoding
/// split across two threads at the last byte (split_decoder.c), checked against libjpeg's
/// own scaled decode (`djpeg -scale 1/4 -dct fast -nosmooth`, the settings of the libjpeg
/// path it replaces) of the same file.
@Suite("camera worker: a preview decoded on two threads from the last byte", .serialized, .timeLimit(.minutes(3)))
struct SplitDecoderTests {
    /// A decoded picture: RGB, 3 bytes a pixel.
    struct Picture {
        var width = 0, height = 0
        var pixels: [UInt8] = []
        /// 0 libjpeg's, 1 one thread of the split decoder's, else the MCU the second thread's
        /// decode was taken from (of `total`).
        var joinedAt = 0, total = 0
        /// What the worker sends: the picture encoded (quality 85, upright as decoded).
        var jpeg = Data()
    }

    /// A photo-like JPEG (gradients, hard-edged shapes, grain), `width`×`height`, with the
    /// chroma `subsampling` Pillow takes (0 4:4:4, 1 4:2:2, 2 4:2:0), or grey.
    static func photo(_ path: String, width: Int, height: Int, subsampling: Int, grey: Bool = false) async throws {
        _ = try await runProgram(["/usr/bin/python3", "-c", """
            import sys
            from PIL import Image, ImageDraw
            w, h = int(sys.argv[2]), int(sys.argv[3])
            grain = Image.effect_noise((w, h), 24)
            red = Image.linear_gradient("L").resize((w, h))
            green = red.transpose(Image.Transpose.ROTATE_90).resize((w, h))
            photo = Image.merge("RGB", (Image.blend(red, grain, 0.3), Image.blend(green, grain, 0.3), Image.new("L", (w, h), 110)))
            draw = ImageDraw.Draw(photo)
            for i in range(12):
                x, y = w * i // 13, h * ((i * 5) % 11) // 12
                draw.rectangle((x, y, x + w // 9, y + h // 7), fill=((i * 70) % 200 + 30, (i * 40) % 180 + 40, (i * 90) % 210 + 20))
                draw.line((0, h * i // 12, w, h - h * i // 12), fill=(240, 240, 240), width=3)
            if sys.argv[5] == "grey":
                photo = photo.convert("L")
            photo.save(sys.argv[1], quality=92, subsampling=int(sys.argv[4]))
            """, path, String(width), String(height), String(subsampling), grey ? "grey" : "colour"])
    }

    /// libjpeg's own 1/4 decode of `path`, as RGB.
    static func libjpeg(_ path: String, scale: String = "1/4") async throws -> Picture {
        let ppm = path + ".ppm"
        _ = try await runProgram(["/usr/bin/djpeg", "-scale", scale, "-dct", "fast", "-nosmooth", "-rgb", "-ppm", "-outfile", ppm, path])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: ppm)))
        // "P6\n<w> <h>\n255\n", then the pixels.
        var fields: [Int] = [], at = 2, number = 0, inNumber = false
        while fields.count < 3, at < bytes.count {
            let byte = bytes[at]
            if byte >= 48 && byte <= 57 {
                number = number * 10 + Int(byte - 48)
                inNumber = true
            } else if inNumber {
                fields.append(number)
                number = 0
                inNumber = false
            }
            at += 1
        }
        let picture = Picture(width: fields[0], height: fields[1], pixels: Array(bytes[at...]))
        #expect(picture.pixels.count == picture.width * picture.height * 3)
        return picture
    }

    /// The stream decoder fed `file`, in `pieces` pieces with the decoding stepped between
    /// them as the worker does (the last byte then finds it part-way), or all at once (the
    /// last byte finds it at the start); then ended. Off the pool: it decodes for tens of ms.
    static func decode(_ file: Data, pieces: Int = 1) async throws -> Picture? {
        try await offThePool {
            guard let stream = sp_stream_new(1600, 200_000_000) else { return nil }
            defer { sp_stream_free(stream) }
            var result: Int32 = 1
            let size = (file.count + pieces - 1) / pieces
            var offset = 0
            while offset < file.count, result == 1 {
                let end = min(file.count, offset + size)
                result = file[offset..<end].withUnsafeBytes { sp_stream_feed(stream, $0.bindMemory(to: UInt8.self).baseAddress, $0.count) }
                offset = end
                // Between pieces, the decoding catches up with what came.
                while offset < file.count, result == 1, sp_stream_step(stream) == 1 {}
            }
            if result == 1 { result = sp_stream_end(stream) }
            guard result == 2 else { return nil }
            var picture = Picture()
            var width: Int32 = 0, height: Int32 = 0
            guard let pixels = sp_stream_pixels(stream, &width, &height) else { return nil }
            picture.width = Int(width)
            picture.height = Int(height)
            picture.pixels = Array(UnsafeBufferPointer(start: pixels, count: Int(width) * Int(height) * 3))
            picture.joinedAt = sp_stream_joined_at(stream, &picture.total)
            var out: UnsafeMutablePointer<UInt8>?
            var encoded: UInt = 0
            guard sp_stream_jpeg(stream, 1, 85, &out, &encoded) == 0, let out else { return nil }
            picture.jpeg = Data(bytes: out, count: Int(encoded))
            free(out)
            return picture
        }
    }

    /// The mean and largest difference per value, over RGB and over luma (ITU-R 601: the
    /// JPEG's own Y, wherever no channel was clipped at 0 or 255 in either picture).
    static func difference(_ a: Picture, _ b: Picture) -> (mean: Double, max: Int, lumaMean: Double, lumaMax: Int) {
        var sum = 0, most = 0, lumaSum = 0.0, lumaMost = 0.0, lumaCount = 0
        for pixel in 0..<(a.width * a.height) {
            var lumaA = 0.0, lumaB = 0.0, clipped = false
            for (channel, weight) in [0.299, 0.587, 0.114].enumerated() {
                let x = Int(a.pixels[pixel * 3 + channel]), y = Int(b.pixels[pixel * 3 + channel])
                sum += abs(x - y)
                most = max(most, abs(x - y))
                lumaA += weight * Double(x)
                lumaB += weight * Double(y)
                clipped = clipped || x == 0 || x == 255 || y == 0 || y == 255
            }
            guard !clipped else { continue }
            lumaSum += abs(lumaA - lumaB)
            lumaMost = max(lumaMost, abs(lumaA - lumaB))
            lumaCount += 1
        }
        let count = Double(a.width * a.height)
        return (Double(sum) / (count * 3), most, lumaSum / Double(max(1, lumaCount)), Int(lumaMost.rounded()))
    }

    @Test("4:2:0, 4:2:2, 4:4:4 and grey, 3600×2400, all bytes at once: split across two threads, joined past the middle, and the picture libjpeg decodes (luma within rounding; colour within rounding but 4:2:0's, where libjpeg scales the chroma in its IDCT and we repeat it)",
          arguments: [(2, false), (1, false), (0, false), (0, true)])
    func againstLibjpeg(subsampling: Int, grey: Bool) async throws {
        let folder = TemporaryDirectory("split-decoder")
        let path = folder.file("photo.jpg")
        try await Self.photo(path, width: 3600, height: 2400, subsampling: subsampling, grey: grey)
        let file = try Data(contentsOf: URL(fileURLWithPath: path))
        let decoded = try #require(try await Self.decode(file))
        let reference = try await Self.libjpeg(path)
        #expect(decoded.width == 900 && decoded.height == 600 && reference.width == 900 && reference.height == 600)
        // All bytes at once: the second thread starts in the middle, and the first meets it
        // a few MCUs later.
        #expect(decoded.joinedAt > decoded.total / 2 && decoded.joinedAt < decoded.total / 2 + decoded.total / 20,
                "joined at \(decoded.joinedAt) of \(decoded.total)")
        let difference = Self.difference(decoded, reference)
        #expect(difference.lumaMean < 0.3 && difference.lumaMax <= 2, "\(difference)")
        if subsampling == 2 && !grey {
            #expect(difference.mean < 1.5, "\(difference)")
        } else {
            #expect(difference.mean < 0.3 && difference.max <= 3, "\(difference)")
        }
        // What the worker sends: encoded in two halves at once and joined by a restart
        // marker, which libjpeg reads back as the picture (within quality 85's loss).
        let sent = folder.file("sent.jpg")
        try decoded.jpeg.writeTestFile(sent)
        #expect(decoded.jpeg.firstRange(of: Data([0xFF, 0xDD, 0x00, 0x04])) != nil && decoded.jpeg.firstRange(of: Data([0xFF, 0xD0])) != nil)
        let readBack = try await Self.libjpeg(sent, scale: "1/1")
        #expect(readBack.width == 900 && readBack.height == 600)
        let loss = Self.difference(decoded, readBack)
        #expect(loss.mean < 3 && loss.lumaMean < 2, "\(loss)")
    }

    @Test("the same photo fed in 4 pieces with the decoding stepped between them (a download): the last byte finds it three quarters through, the rest is split, and the picture is the one decoded all at once; a small one is decoded on one thread")
    func streamedAsDownloaded() async throws {
        let folder = TemporaryDirectory("split-decoder-streamed")
        let path = folder.file("photo.jpg")
        try await Self.photo(path, width: 3600, height: 2400, subsampling: 2)
        let file = try Data(contentsOf: URL(fileURLWithPath: path))
        let whole = try #require(try await Self.decode(file))
        let streamed = try #require(try await Self.decode(file, pieces: 4))
        // Three pieces decoded on one thread (but the 64 KiB it stays behind), the rest split.
        #expect(streamed.joinedAt > streamed.total * 3 / 4, "joined at \(streamed.joinedAt) of \(streamed.total)")
        #expect(streamed.joinedAt != whole.joinedAt)
        let apart = Self.difference(whole, streamed)
        #expect(apart.max <= 1, "\(apart)")
        // Under 128 KiB left at the last byte (the last of 8 pieces of a 0.5 MB photo): not
        // worth a second thread.
        let small = folder.file("small.jpg")
        try await Self.photo(small, width: 3600, height: 400, subsampling: 2)
        let one = try #require(try await Self.decode(try Data(contentsOf: URL(fileURLWithPath: small)), pieces: 8))
        #expect(one.joinedAt == 1)
    }

    @Test("what the split decoder leaves to libjpeg is still decoded, by libjpeg: restart markers (jpegtran -restart), a progressive JPEG, and a photo small enough for a 1/2 scale")
    func leftToLibjpeg() async throws {
        let folder = TemporaryDirectory("split-decoder-libjpeg")
        let path = folder.file("photo.jpg"), restart = folder.file("restart.jpg"), progressive = folder.file("progressive.jpg")
        try await Self.photo(path, width: 3600, height: 2400, subsampling: 2)
        _ = try await runProgram(["/usr/bin/jpegtran", "-restart", "2", "-outfile", restart, path])
        _ = try await runProgram(["/usr/bin/jpegtran", "-progressive", "-outfile", progressive, path])
        for file in [restart, progressive] {
            let decoded = try #require(try await Self.decode(try Data(contentsOf: URL(fileURLWithPath: file)), pieces: 8), "\(file)")
            #expect(decoded.joinedAt == 0, "\(file)")
            let difference = Self.difference(decoded, try await Self.libjpeg(file))
            #expect(difference.max == 0, "\(file): \(difference)")
        }
        let small = folder.file("small.jpg")
        try await Self.photo(small, width: 3000, height: 2000, subsampling: 2)
        let decoded = try #require(try await Self.decode(try Data(contentsOf: URL(fileURLWithPath: small))))
        #expect(decoded.joinedAt == 0 && decoded.width == 1500)
    }

    @Test("damaged photos (bytes changed in the entropy data or the headers, runs of random bytes, cut short), each fed at once and in pieces: a picture or none, never a crash, a hang or a read out of bounds; one cut short gives none")
    func damaged() async throws {
        let folder = TemporaryDirectory("split-decoder-damaged")
        let path = folder.file("photo.jpg")
        try await Self.photo(path, width: 3600, height: 2400, subsampling: 2)
        let file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // Where the entropy data starts: after the SOS segment.
        var scan = 2
        while scan + 4 < file.count, file[scan + 1] != 0xDA { scan += 2 + (Int(file[scan + 2]) << 8 | Int(file[scan + 3])) }
        let data = scan + 2 + (Int(file[scan + 2]) << 8 | Int(file[scan + 3]))
        var generator = SeededGenerator(seed: 43)
        var made = 0
        for round in 0..<24 {
            var damaged = file
            switch round % 4 {
            case 0:
                for _ in 0..<Int.random(in: 1...12, using: &generator) { damaged[Int.random(in: data..<file.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            case 1:
                let at = Int.random(in: data..<(file.count - 4096), using: &generator)
                for index in at..<(at + Int.random(in: 1...4000, using: &generator)) { damaged[index] = UInt8.random(in: 0...255, using: &generator) }
            case 2:
                for _ in 0..<Int.random(in: 1...4, using: &generator) { damaged[Int.random(in: 2..<data, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            default:
                damaged = Array(file[..<Int.random(in: data..<(file.count - 64), using: &generator)])
            }
            let whole = try await Self.decode(Data(damaged))
            let streamed = try await Self.decode(Data(damaged), pieces: 16)
            if round % 4 == 3 { #expect(whole == nil && streamed == nil, "round \(round): a photo cut short gave a picture") }
            made += (whole == nil ? 0 : 1) + (streamed == nil ? 0 : 1)
        }
        // The intact photo still decodes after all of them.
        #expect(try await Self.decode(Data(file)) != nil)
        #expect(made < 48)
    }
}

/// A small deterministic generator (SplitMix64), so that a failing round can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
