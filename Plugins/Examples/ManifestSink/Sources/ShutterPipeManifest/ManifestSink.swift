#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// A sink that appends one JSON line per photo file to a manifest: shot, time, camera,
/// camera file name, size and SHA-256 of the bytes as the camera delivered them. The
/// manifest is fsynced before `store` returns, so a shot answered `photoSuccess` is
/// always in it. Put it after a `files` sink to record where each file went.
public final class ManifestSink: PhotoSink {
    public static let typeName = "manifest"

    public static func register(in registry: PluginRegistry) throws {
        try registry.registerSink(typeName, summary: "appends a SHA-256 line per photo file to a JSON-lines manifest, fsynced (example plugin)") { options, environment in
            ManifestSink(path: try options.path("path", default: "./captures/manifest.jsonl"), session: environment.session)
        }
    }

    private let path: String
    private let session: String
    /// Storing is throughput work: it yields the CPU to firing cameras and triggers.
    private let io = BlockingQueue(label: "shutterpipe.manifest", priority: .background)

    /// It records photos but keeps no copy of them: it never lets a camera delete a shot.
    public var role: SinkRole { .processing }

    public init(path: String, session: String) {
        self.path = path
        self.session = session
    }

    public func store(_ photo: CapturedPhoto, context: ShotContext) async throws -> SinkReceipt {
        let lines = photo.files.map { file -> Data in
            var record: [String: Any] = [
                "session": session, "shot": context.shotNumber, "shotID": context.shot.description, "camera": context.camera, "trigger": context.trigger,
                "time": ISO8601DateFormatter().string(from: context.captureTime), "name": file.name,
                "bytes": file.data.count, "sha256": SHA256.hex(file.data),
            ]
            if let stored = context.storedSoFar.first?.location { record["stored"] = stored }
            var line = (try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
            line.append(UInt8(ascii: "\n"))
            return line
        }
        let path = self.path
        let data = lines.reduce(Data(), +)
        let size = try await io.run { () throws -> Int in try Self.append(data, to: path) }
        // The manifest is the sink's own file, not the photo's: a record, so that the
        // answer (photoSuccess) lists only the photo's files.
        return SinkReceipt(files: [], records: [StoredFile(location: path, byteCount: size)])
    }

    /// Appends and fsyncs; a short write is undone, so the manifest never ends in half a
    /// line. Returns the manifest's size.
    static func append(_ data: Data, to path: String) throws(ShutterError) -> Int {
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty { try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw ShutterError(.storageUnavailable, "manifest: cannot open '\(path)': \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let before = lseek(descriptor, 0, SEEK_END)
        let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == data.count, fsync(descriptor) == 0 else {
            let reason = String(cString: strerror(errno))
            if before >= 0 { _ = ftruncate(descriptor, before) }
            throw ShutterError(.storageUnavailable, "manifest: cannot write '\(path)': \(reason)", fix: "free space or choose another 'path'")
        }
        return Int(before) + data.count
    }
}

/// SHA-256 (FIPS 180-4), small and dependency-free.
enum SHA256 {
    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    static func hex(_ data: Data) -> String {
        digest(data).map { String(format: "%02x", $0) }.joined()
    }

    static func digest(_ data: Data) -> [UInt8] {
        var h: [UInt32] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
        var message = [UInt8](data)
        let bitLength = UInt64(message.count) * 8
        message.append(0x80)
        while message.count % 64 != 56 { message.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { message.append(UInt8((bitLength >> UInt64(shift)) & 0xFF)) }
        var w = [UInt32](repeating: 0, count: 64)
        for chunk in stride(from: 0, to: message.count, by: 64) {
            for i in 0..<16 {
                let j = chunk + 4 * i
                w[i] = UInt32(message[j]) << 24 | UInt32(message[j + 1]) << 16 | UInt32(message[j + 2]) << 8 | UInt32(message[j + 3])
            }
            for i in 16..<64 {
                let s0 = rotate(w[i - 15], 7) ^ rotate(w[i - 15], 18) ^ (w[i - 15] >> 3)
                let s1 = rotate(w[i - 2], 17) ^ rotate(w[i - 2], 19) ^ (w[i - 2] >> 10)
                w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
            }
            var (a, b, c, d, e, f, g, hh) = (h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7])
            for i in 0..<64 {
                let s1 = rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)
                let choice = (e & f) ^ (~e & g)
                let t1 = hh &+ s1 &+ choice &+ k[i] &+ w[i]
                let s0 = rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)
                let majority = (a & b) ^ (a & c) ^ (b & c)
                let t2 = s0 &+ majority
                (hh, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
            }
            h = zip(h, [a, b, c, d, e, f, g, hh]).map { $0 &+ $1 }
        }
        return h.flatMap { word in (0..<4).map { UInt8((word >> UInt32(24 - 8 * $0)) & 0xFF) } }
    }

    private static func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 { (value >> count) | (value << (32 - count)) }
}
