import FileStubBackend
import Foundation
import ShutterPipeFixtures
import ShutterPipeKit
import ShutterPipeSupport
import TestSupport
import Testing

let fixtures = "\(repositoryRoot)/Plugins/FileStub/Tests/Fixtures"
let context = BackendContext(log: .discarding) { _ in }

func options(_ configure: (inout FileStubBackend.Options) -> Void) -> FileStubBackend.Options {
    var options = FileStubBackend.Options()
    configure(&options)
    return options
}

/// Runs a program (off the cooperative pool) and returns its exit status and output.
func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
    let result = try await runProgram(arguments)
    return (result.status, result.text)
}

@Suite("file-stub backend", .timeLimit(.minutes(2)))
struct FileStubBackendTests {
    @Test("synthesised JPEGs are valid for exiftool, the right size, and distinct per shot")
    func synthesised() async throws {
        let backend = FileStubBackend(options: options { $0.width = 320; $0.height = 200 })
        try await backend.prepare(context)
        let first = try await backend.capture(), second = try await backend.capture()
        #expect(first.files.count == 1)
        #expect(first.files[0].data != second.files[0].data)
        #expect(first.files[0].name == "STUB0001.JPG")
        #expect(first.camera == "file-stub")
        let folder = TemporaryDirectory("stub")
        let path = folder.file("shot.jpg")
        try first.files[0].data.writeTestFile(path)
        let (status, output) = try await run(["exiftool", "-validate", "-warning", "-error", "-ImageSize", "-FileType", "-s", path])
        #expect(status == 0)
        #expect(output.contains("ImageSize                       : 320x200"))
        #expect(output.contains("FileType                        : JPEG"))
        #expect(output.contains("Validate                        : OK"), "\(output)")
    }

    @Test("synthesised JPEG odd sizes still decode", arguments: [(8, 8), (13, 7), (1001, 3)])
    func oddSizes(width: Int, height: Int) async throws {
        let data = SyntheticJPEG.make(width: width, height: max(height, 8), shot: 3)
        #expect(data.prefix(2) == Data([0xFF, 0xD8]))
        #expect(data.suffix(2) == Data([0xFF, 0xD9]))
        let folder = TemporaryDirectory("odd")
        let path = folder.file("odd.jpg")
        try data.writeTestFile(path)
        let (_, output) = try await run(["exiftool", "-ImageSize", "-warning", "-s3", path])
        #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "\(width)x\(max(height, 8))")
    }

    @Test("a folder is replayed in name order, looping, with RAW+JPEG pairs as one exposure")
    func replay() async throws {
        let backend = FileStubBackend(options: options { $0.directory = fixtures })
        try await backend.prepare(context)
        var names: [[String]] = []
        for _ in 0..<3 { names.append(try await backend.capture().files.map(\.name)) }
        #expect(names == [["IMG_0001.JPG"], ["IMG_0002.CR2", "IMG_0002.JPG"], ["IMG_0001.JPG"]])
        let original = try Data(contentsOf: URL(fileURLWithPath: "\(fixtures)/IMG_0001.JPG"))
        #expect(try await backend.capture().files[0].data == (try Data(contentsOf: URL(fileURLWithPath: "\(fixtures)/IMG_0002.CR2"))))
        #expect(!original.isEmpty)
    }

    @Test("a replayed file replaced by a link after the folder was read is refused by name, never followed; a camera-sized file is read whole")
    func linkReplacingAFile() async throws {
        let folder = TemporaryDirectory("stub-link")
        let large = Data((0..<(9 << 20) + 4321).map { UInt8(truncatingIfNeeded: $0 &* 7) })  // past PhotoMemory.largeFrom
        try large.writeTestFile(folder.file("A.JPG"))
        try Data("secret".utf8).writeTestFile(folder.file(".secret"))
        try Data("b".utf8).writeTestFile(folder.file("B.JPG"))
        let backend = FileStubBackend(options: options { $0.directory = folder.path })
        try await backend.prepare(context)
        #expect(try await backend.capture().files[0].data == large)
        try FileManager.default.removeItem(atPath: folder.file("B.JPG"))
        try FileManager.default.createSymbolicLink(atPath: folder.file("B.JPG"), withDestinationPath: folder.file(".secret"))
        do {
            _ = try await backend.capture()
            Issue.record("a link was followed")
        } catch let error as ShutterError {
            #expect(error.cause == .cameraFailure)
            #expect(error.message.contains("B.JPG") && error.message.contains("symbolic link"), "\(error)")
        }
    }

    @Test("pairByStem off makes every file its own exposure")
    func noPairing() async throws {
        let backend = FileStubBackend(options: options { $0.directory = fixtures; $0.pairByStem = false })
        try await backend.prepare(context)
        var names: [String] = []
        for _ in 0..<3 { names += try await backend.capture().files.map(\.name) }
        #expect(names == ["IMG_0001.JPG", "IMG_0002.CR2", "IMG_0002.JPG"])
    }

    @Test("failEvery fails every Nth capture with failWith")
    func failEvery() async throws {
        let backend = FileStubBackend(options: options { $0.failEvery = 2; $0.failWith = .storageUnavailable })
        try await backend.prepare(context)
        var outcomes: [FailureCause?] = []
        for _ in 0..<4 {
            do { _ = try await backend.capture(); outcomes.append(nil) } catch let error as ShutterError { outcomes.append(error.cause) }
        }
        #expect(outcomes == [nil, .storageUnavailable, nil, .storageUnavailable])
    }

    @Test("failOnEnter, a missing folder and an empty folder fail enter with noCamera")
    func enterFailures() async throws {
        let empty = TemporaryDirectory("empty")
        for options in [options { $0.failOnEnter = true }, options { $0.directory = "/nonexistent/shots" }, options { $0.directory = empty.path }] {
            await #expect(throws: ShutterError.self) { try await FileStubBackend(options: options).prepare(context) }
            do { try await FileStubBackend(options: options).prepare(context) } catch let error as ShutterError {
                #expect(error.cause == .noCamera)
            }
        }
    }

    @Test("latency delays each capture and honours cancellation")
    func latency() async throws {
        let backend = FileStubBackend(options: options { $0.latency = .milliseconds(100) })
        try await backend.prepare(context)
        let start = ContinuousClock.now
        _ = try await backend.capture()
        #expect(ContinuousClock.now - start >= .milliseconds(100))
        let slow = FileStubBackend(options: options { $0.latency = .seconds(30) })
        let startTimeout = ContinuousClock.now
        await #expect(throws: ShutterError.self) {
            _ = try await withDeadline(.milliseconds(50), "capture") { try await slow.capture() }
        }
        #expect(ContinuousClock.now - startTimeout < .seconds(15))  // not the 30 s latency
    }

    @Test("options come from the config with their defaults and checks")
    func optionsFromConfig() throws {
        let node = ConfigNode(.mapping([
            ConfigEntry(key: "failWith", keyLocation: SourceLocation(file: "c", line: 1, column: 1),
                        value: ConfigNode(.scalar("melted", quoted: false), at: SourceLocation(file: "c", line: 1, column: 11))),
        ]), at: SourceLocation(file: "c", line: 1, column: 1))
        // As the registry makes a plugin: the factory, then every mistake it recorded.
        let error = #expect(throws: ConfigError.self) {
            let options = try PluginOptions(node, owner: "backend 'file-stub'")
            _ = try FileStubBackend.Options(options)
            try options.rejectUnknownKeys()
        }
        #expect(error?.description.hasPrefix("c:1:11: backend 'file-stub': 'failWith' must be one of permissionDenied") == true)
    }
}
