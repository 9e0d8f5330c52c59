#if canImport(Glibc)
import Glibc
#endif
@testable import FilesSink
import Foundation
@testable import ShutterPipeApp
import ShutterPipeFixtures
import ShutterPipeKit
import ShutterPipeRuntime
import TestSupport
import Testing

/// Case 6: bad input. Seeded mutation loops: each input derives from the run's seed, so a
/// failure names the seed and the iteration that reproduce it.
@Suite("fault: bad input")
struct FuzzTests {
    /// The configs we ship: the seeds the mutations start from.
    static let seedConfigs: [(String, [UInt8])] = {
        let folders = ["\(repositoryRoot)/Config"] + ((try? FileManager.default.contentsOfDirectory(atPath: "\(repositoryRoot)/Plugins")) ?? [])
            .map { "\(repositoryRoot)/Plugins/\($0)" }
        return folders.flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".yaml") }.sorted().compactMap { name in
                FileManager.default.contents(atPath: "\(folder)/\(name)").map { ("\(folder)/\(name)", [UInt8]($0)) }
            }
        }
    }()

    static let tokens: [String] = [":", ": ", "- ", "-", "{", "}", "[", "]", "\n", "  ", "    ", "\t", "&a ", "*a", "*b", "<<: *a\n", "!!str ", "!!int ",
                                   "!custom ", "'", "\"", "#", "${HOME}", "${NOPE}", "${X:-", "~", "|", ">", ",", "? ", "\0", "\u{FEFF}", "\r\n", "%YAML 1.1\n",
                                   "---\n", "...\n", "é", "😀", "\u{202E}", "type: ", "version: 2", "sinks: []", "triggers: ", "backend: ", "null", "true",
                                   "-1", "99999999999999999999", "1e400", "0x1F", ".inf", "NaN", "\"\\u0000\"", "0755", "10ms", "-5s", "../..",
                                   String(repeating: "a", count: 5_000), String(repeating: "[", count: 300), String(repeating: "- ", count: 300)]

    static func mutate(_ input: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<7, using: &random) {
            case 0 where !bytes.isEmpty: bytes[position] = UInt8.random(in: 0...255, using: &random)
            case 1: bytes.insert(contentsOf: Array(tokens.randomElement(using: &random)!.utf8), at: position)
            case 2 where !bytes.isEmpty: bytes.removeSubrange(position..<min(bytes.count, position + Int.random(in: 1...40, using: &random)))
            case 3: bytes = Array(bytes.prefix(position))
            case 4:  // duplicate or drop a line
                var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
                guard !lines.isEmpty else { break }
                let line = Int.random(in: 0..<lines.count, using: &random)
                if Bool.random(using: &random) { lines.insert(lines[line], at: line) } else { lines.remove(at: line) }
                bytes = Array(lines.joined(separator: [UInt8(ascii: "\n")]))
            case 5:  // re-indent a line
                var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
                guard !lines.isEmpty else { break }
                let line = Int.random(in: 0..<lines.count, using: &random)
                lines[line] = Array(repeating: UInt8(ascii: " "), count: Int.random(in: 0...9, using: &random)) + lines[line].drop { $0 == UInt8(ascii: " ") }
                bytes = Array(lines.joined(separator: [UInt8(ascii: "\n")]))
            default:  // replace a value after a colon
                guard let colon = bytes[position...].firstIndex(of: UInt8(ascii: ":")) else { break }
                let end = bytes[colon...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
                bytes.replaceSubrange((colon + 1)..<end, with: Array(" \(tokens.randomElement(using: &random)!)".utf8))
            }
        }
        return bytes
    }

    /// Lines as YAML counts them: LF, CR LF, a lone CR, and NEL, LS and PS in UTF-8.
    static func lineCount(_ bytes: [UInt8]) -> Int {
        var count = 1
        for (index, byte) in bytes.enumerated() {
            if byte == 0x0A || (byte == 0x0D && (index + 1 == bytes.count || bytes[index + 1] != 0x0A)) { count += 1 }
            if byte == 0xC2 && index + 1 < bytes.count && bytes[index + 1] == 0x85 { count += 1 }
            if byte == 0xE2 && index + 2 < bytes.count && bytes[index + 1] == 0x80 && (bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9) { count += 1 }
        }
        return count
    }

    @Test("thousands of mutated configs: no crash, and every error carries the file, a line and a column inside the file")
    func configs() async throws {
        let iterations = Chaos.count(ci: 4_000, full: 200_000)
        #expect(Self.seedConfigs.count >= 10)
        let (rejected, accepted, badErrors) = try await offThePool { () -> (Int, Int, [String]) in
            var random = Chaos.random("yaml")
            var rejected = 0, accepted = 0, badErrors: [String] = []
            for iteration in 0..<iterations {
                let (path, seed) = Self.seedConfigs[iteration % Self.seedConfigs.count]
                let input = Self.mutate(seed, &random)
                let lines = Self.lineCount(input)
                do {
                    let root = try YAMLLoader.parse(input, file: "fuzz.yaml", environment: ["HOME": "/home/fuzz"])
                    _ = try PipelineLoader.make(root, registry: BuiltInPlugins.registry(), log: .discarding, console: Console { _ in })
                    accepted += 1
                } catch let caught where caught is ConfigError || caught is ConfigErrors {
                    rejected += 1
                    // One mistake, or several found in one pass: each must be placed.
                    let errors = (caught as? ConfigErrors)?.errors ?? [caught as! ConfigError]
                    if errors.count > ConfigErrors.limit { badErrors.append("iteration \(iteration): \(errors.count) errors, over the limit") }
                    for error in errors {
                        guard let location = error.location, location.file == "fuzz.yaml", (1...lines + 1).contains(location.line), location.column >= 1 else {
                            badErrors.append("iteration \(iteration) (from \(path)): \(error)")
                            continue
                        }
                        if error.message.isEmpty { badErrors.append("iteration \(iteration): empty message") }
                    }
                } catch {
                    badErrors.append("iteration \(iteration) (from \(path)): not a config error: \(error)")
                }
            }
            return (rejected, accepted, badErrors)
        }
        #expect(badErrors.isEmpty, "seed \(Chaos.seed): \(badErrors.count) bad errors, such as \(badErrors.prefix(5))")
        #expect(rejected > iterations / 4, "the mutations do reach the error paths")
        Chaos.record("config fuzz", ["inputs": iterations, "rejected": rejected, "accepted": accepted, "withoutLineAndColumn": badErrors.count])
    }

    /// Camera JPEGs to start from: our own synthetic ones, plus the shared samples where present.
    static func jpegSeeds(limit: Int) -> [(String, [UInt8])] {
        var seeds: [(String, [UInt8])] = (1...3).map { ("synthetic-\($0)", [UInt8](SyntheticJPEG.make(width: 64 * $0, height: 48 * $0, shot: $0))) }
        let samples = "\(repositoryRoot)/../shared/samples/camera-jpegs"
        if let enumerator = FileManager.default.enumerator(atPath: samples) {
            var found: [String] = []
            while let name = enumerator.nextObject() as? String {
                if name.lowercased().hasSuffix(".jpg") || name.lowercased().hasSuffix(".jpeg") { found.append(name) }
            }
            for name in found.sorted().prefix(limit) {
                if let data = FileManager.default.contents(atPath: "\(samples)/\(name)") { seeds.append((name, [UInt8](data))) }
            }
        }
        return seeds
    }

    @Test("mutated and truncated camera JPEGs through the EXIF path: no crash, and the photo is always stored")
    func jpegs() async throws {
        var random = Chaos.random("jpeg")
        let iterations = Chaos.count(ci: 400, full: 10_000)
        let seeds = Self.jpegSeeds(limit: Chaos.full ? 500 : 12)
        let folder = TemporaryDirectory("chaos-jpeg")
        var options = try FilesSink.Options(directory: folder.file("out"), filename: "f-{seq:06}.{ext}")
        options.exif = try ExifOptions(PluginOptions(configNode(["Artist": "Fuzz", "Copyright": "© {session}", "ImageDescription": "shot {shot}",
                                                                    "Keywords": ["a", "b"], "gps": ["latitude": 48.85, "longitude": 2.35]]),
                                                     owner: "sink 'files'"))
        let sink = FilesSink(options: options)
        var notStored: [String] = [], sidecars = 0, stored = 0
        for iteration in 0..<iterations {
            let (name, seed) = seeds[iteration % seeds.count]
            var bytes = seed
            // Mostly damage the metadata end of the file, where the tagger works.
            let window = min(bytes.count, 70_000)
            for _ in 0..<Int.random(in: 1...6, using: &random) where !bytes.isEmpty {
                let position = Int.random(in: 0..<min(bytes.count, window), using: &random)
                switch Int.random(in: 0..<5, using: &random) {
                case 0: bytes[position] = UInt8.random(in: 0...255, using: &random)
                case 1: bytes = Array(bytes.prefix(max(2, position)))  // truncated
                case 2: bytes.insert(contentsOf: [0xFF, [0xE1, 0xE2, 0xED, 0xFE, 0xDA, 0xD9].randomElement(using: &random)!, 0xFF, 0xFF], at: position)
                case 3 where position + 4 < bytes.count: bytes[position] = 0xFF; bytes[position + 1] = 0xE1; bytes[position + 2] = UInt8.random(in: 0...255, using: &random); bytes[position + 3] = UInt8.random(in: 0...255, using: &random)
                default: bytes.removeSubrange(position..<min(bytes.count, position + Int.random(in: 1...64, using: &random)))
                }
            }
            let photo = CapturedPhoto(files: [CapturedFile(name: "IMG_\(iteration).JPG", data: Data(bytes))], camera: "fuzz")
            let context = ShotContext(session: "fuzz", shot: ShotID(run: "test", number: iteration + 1), captureTime: Date(), camera: "fuzz", trigger: "fuzz")
            do {
                let receipt = try await sink.store(photo, context: context)
                guard let first = receipt.files.first, let data = FileManager.default.contents(atPath: first.location), !data.isEmpty || bytes.isEmpty else {
                    notStored.append("iteration \(iteration) from \(name): no file"); continue
                }
                stored += 1
                sidecars += receipt.files.count - 1
                for file in receipt.files { unlink(file.location) }
            } catch {
                notStored.append("iteration \(iteration) from \(name): \(error)")
            }
        }
        #expect(notStored.isEmpty, "seed \(Chaos.seed): \(notStored.prefix(5))")
        Chaos.record("jpeg fuzz", ["inputs": iterations, "seedFiles": seeds.count, "stored": stored, "withSidecar": sidecars])
    }

    @Test("garbage on the socket: no crash, an error reply per line, and the session still answers")
    func socketGarbage() async throws {
        var random = Chaos.random("socket")
        let folder = TemporaryDirectory("chaos-garbage")
        let socket = folder.file("s.sock")
        let config = try socketConfig(backend: "  type: file-stub\n  width: 64\n  height: 48", socket: socket, output: folder.file("out"), in: folder)
        let session = try await SocketSession.start(config, socket: socket, in: folder)
        let connections = Chaos.count(ci: 40, full: 2_000)
        let pieces = ["{", "}", "\"event\"", ":", "\"capture\"", ",", "\"id\"", "1e999", "-0", "null", "[", "]", "\\u0000", "\"\\ud800\"", "true", " ", "\t"]
        var garbageBytes = 0
        for number in 0..<connections {
            let client = try await SocketLines(path: socket)
            var lines = 0
            for _ in 0..<Int.random(in: 1...20, using: &random) {
                var bytes: [UInt8]
                if Bool.random(using: &random) {
                    bytes = (0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                    bytes.removeAll { $0 == UInt8(ascii: "\n") }
                } else {
                    bytes = Array((0..<Int.random(in: 1...12, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined().utf8)
                }
                garbageBytes += bytes.count + 1
                await client.send(bytes: bytes + [UInt8(ascii: "\n")])
                // Blank lines are ignored; every other line gets a reply.
                if !String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { lines += 1 }
            }
            let replies = await client.replies(lines)
            #expect(replies.count == lines && replies.allSatisfy { $0["error"] != nil || $0["state"] != nil },
                    "seed \(Chaos.seed) connection \(number): \(replies.count) replies to \(lines) lines: \(client.lines.suffix(3))")
            if number % 10 == 0 {  // a line far past any sane length
                await client.send(bytes: [UInt8](repeating: UInt8(ascii: "x"), count: 2_000_000) + [UInt8(ascii: "\n")])
                let last = await client.replies(lines + 1).last
                #expect((last?["error"] as? String)?.isEmpty == false, "an over-long line gets an error: \(String(describing: last))")
            }
            // Whatever came before, a good request on a fresh connection is answered.
            let check = try await SocketLines(path: socket)
            await check.send("{\"event\":\"capture\",\"id\":\(number)}\n")
            let reply = await check.replies(1).first
            #expect(reply?["state"] as? String == "photoSuccess", "seed \(Chaos.seed) connection \(number): \(String(describing: reply))")
            #expect(session.process.isRunning, "seed \(Chaos.seed) connection \(number): the session died")
            if !session.process.isRunning { break }
        }
        #expect(await session.stop().status == 0)
        Chaos.record("socket garbage", ["connections": connections, "garbageBytes": garbageBytes])
    }
}
