#if canImport(Glibc)
import Glibc
#endif
@testable import FilesSink
import Foundation
import ShutterPipeKit
import TestSupport
import Testing

func shot(_ number: Int = 1, session: String = "portrait", camera: String = "Nikon D750", trigger: String = "stdin",
          time: Date = Date(timeIntervalSince1970: 1_780_000_000)) -> ShotContext {
    ShotContext(session: session, shot: ShotID(run: "test", number: number), captureTime: time, camera: camera, trigger: trigger)
}

func photo(_ names: [String] = ["DSC_0001.JPG"], bytes: String = "jpeg bytes") -> CapturedPhoto {
    CapturedPhoto(files: names.map { CapturedFile(name: $0, data: Data("\($0): \(bytes)".utf8)) }, camera: "Nikon D750")
}

func sink(_ folder: TemporaryDirectory, directory: String? = nil, filename: String = "{session}-{seq:04}.{ext}") throws -> FilesSink {
    FilesSink(options: try FilesSink.Options(directory: directory ?? folder.path, filename: filename))
}

@Suite("files sink", .timeLimit(.minutes(2)))
struct FilesSinkTests {
    @Test("stores the bytes under the templated name and reports the path and sequence")
    func stores() async throws {
        let folder = TemporaryDirectory("files")
        let receipt = try await sink(folder).store(photo(), context: shot())
        #expect(receipt.files.map(\.location) == ["\(folder.path)/portrait-0001.jpg"])
        #expect(receipt.files.first?.sequence == 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: "\(folder.path)/portrait-0001.jpg")) == photo().files[0].data)
        #expect(folder.names() == [".shutterpipe-sequence", "portrait-0001.jpg"])  // no temporary file left
    }

    @Test("every placeholder renders, with sub-folders from the template")
    func placeholders() async throws {
        let folder = TemporaryDirectory("placeholders")
        let time = Date(timeIntervalSince1970: 1_780_000_000)
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd/HHmmss"
        let (date, clock) = { let parts = formatter.string(from: time).split(separator: "/"); return (String(parts[0]), String(parts[1])) }()
        let sink = try sink(folder, directory: "\(folder.path)/{session}",
                            filename: "{date}/{time}-{seq:03}-{shot:02}-{camera}-{name}-{trigger}.{ext}")
        let receipt = try await sink.store(photo(["DSC_0042.NEF"]), context: shot(7, time: time))
        #expect(receipt.files.map(\.location) == ["\(folder.path)/portrait/\(date)/\(clock)-001-07-Nikon D750-DSC_0042-stdin.nef"])
    }

    @Test("values cannot leave the folder: slashes, dots, NUL and long values are made safe")
    func unsafeValues() async throws {
        let folder = TemporaryDirectory("unsafe")
        let sink = try sink(folder, filename: "{session}-{camera}-{name}.{ext}")
        let nasty = String(repeating: "x", count: 300)
        let receipt = try await sink.store(
            CapturedPhoto(files: [CapturedFile(name: "../../etc/..", data: Data("a".utf8))], camera: "x"),
            context: shot(session: nasty, camera: "../\u{0}evil/"))
        let location = try #require(receipt.files.first?.location)
        #expect(location.hasPrefix(folder.path + "/"))
        let name = String(location.dropFirst(folder.path.count + 1))
        #expect(!name.contains("/"))
        #expect(name == String(repeating: "x", count: 100) + "-..__evil_-_.bin")
    }

    @Test("templates that leave the folder or use unknown placeholders are refused", arguments: [
        ("/etc/{seq}.jpg", "must be relative"), ("../{seq}.jpg", "would leave the configured directory"),
        ("a/../../{seq}", "would leave"), ("{sesion}.jpg", "did you mean '{session}'?"), ("{seq:abc}", "only {seq}, {cameraseq}, {shot}, {frame} and {focusstep} take a width"),
        ("{session", "without '}'"), ("x}", "without '{'"), ("shots/", "must name a file"), ("a//b", "empty path component"),
        ("~/x.jpg", "must be relative"), ("{name:3}", "only {seq}, {cameraseq}, {shot}, {frame} and {focusstep}"),
    ])
    func badTemplates(template: String, message: String) {
        do {
            _ = try FilesSink.Options(filename: template)
            Issue.record("'\(template)' was accepted")
        } catch {
            #expect(error.description.contains(message), "\(error)")
        }
    }

    @Test("the sequence persists across sink instances (a restart) and is per folder")
    func sequencePersists() async throws {
        let folder = TemporaryDirectory("sequence")
        _ = try await sink(folder).store(photo(), context: shot(1))
        _ = try await sink(folder).store(photo(), context: shot(2))
        let third = try await sink(folder).store(photo(), context: shot(3))
        #expect(third.files.first?.location.hasSuffix("portrait-0003.jpg") == true)
        let other = TemporaryDirectory("sequence-other")
        #expect(try await sink(other).store(photo(), context: shot(4)).files.first?.sequence == 1)
    }

    @Test("a lost or emptied sequence file continues after the highest number in the folder")
    func sequenceRecoveredFromNames() async throws {
        for damage in ["delete", "empty"] {
            let folder = TemporaryDirectory("sequence-\(damage)")
            for number in 1...3 { _ = try await sink(folder).store(photo(), context: shot(number)) }
            let counter = folder.file(".shutterpipe-sequence")
            if damage == "delete" { try FileManager.default.removeItem(atPath: counter) } else { try Data().writeTestFile(counter) }
            let next = try await sink(folder).store(photo(), context: shot(4))
            #expect(next.files.first?.sequence == 4, "after '\(damage)'")
        }
    }

    @Test("photos moved out of the folder (an import) do not bring their numbers back")
    func sequenceSurvivesImport() async throws {
        let folder = TemporaryDirectory("sequence-import")
        for number in 1...2 { _ = try await sink(folder).store(photo(), context: shot(number)) }
        for name in folder.names() where name.hasSuffix(".jpg") { try FileManager.default.removeItem(atPath: folder.file(name)) }
        let next = try await sink(folder).store(photo(), context: shot(3))
        #expect(next.files.first?.sequence == 3)
    }

    @Test("RAW+JPEG of one exposure share one sequence number")
    func pairsShareSequence() async throws {
        let folder = TemporaryDirectory("pairs")
        let receipt = try await sink(folder).store(photo(["DSC_0001.NEF", "DSC_0001.JPG"]), context: shot())
        #expect(receipt.files.map { ($0.location as NSString).lastPathComponent } == ["portrait-0001.nef", "portrait-0001.jpg"])
        #expect(Set(receipt.files.compactMap(\.sequence)) == [1])
    }

    @Test("an existing file is never overwritten: the next number is taken")
    func neverOverwritesWithSequence() async throws {
        let folder = TemporaryDirectory("existing")
        try Data("precious".utf8).writeTestFile(folder.file("portrait-0001.jpg"))
        let receipt = try await sink(folder).store(photo(), context: shot())
        #expect(receipt.files.first?.location.hasSuffix("portrait-0002.jpg") == true)
        #expect(try String(contentsOfFile: folder.file("portrait-0001.jpg"), encoding: .utf8) == "precious")
    }

    @Test("without {seq}, a taken name gets -2, -3… (cameras reuse capt0000.jpg)")
    func neverOverwritesWithoutSequence() async throws {
        let folder = TemporaryDirectory("reuse")
        let sink = try sink(folder, filename: "{name}.{ext}")
        var names: [String] = []
        for number in 1...3 {
            let receipt = try await sink.store(photo(["capt0000.jpg"], bytes: "shot \(number)"), context: shot(number))
            names += receipt.files.map { ($0.location as NSString).lastPathComponent }
            #expect(receipt.files.first?.sequence == nil)
        }
        #expect(names == ["capt0000.jpg", "capt0000-2.jpg", "capt0000-3.jpg"])
        #expect(try String(contentsOfFile: folder.file("capt0000.jpg"), encoding: .utf8).hasSuffix("shot 1"))
    }

    @Test("2,000 photos under one name, across a restart, are written once each: a taken name retries only the naming")
    func twoThousandSameNamed() async throws {
        let folder = TemporaryDirectory("same-name", inMemory: true)
        // A camera that names every shot capt0000.jpg, and a template without {seq}.
        // Writing and fsyncing the photo again for every taken name, as before, makes two
        // million writes and fsyncs by shot 2,000: it cannot finish within the time limit.
        let body = String(repeating: "x", count: 4_096)
        var names: [String] = []
        for session in 0..<2 {
            let sink = try sink(folder, filename: "{name}.{ext}")  // a new session finds the names on disk
            for index in 1...1_000 {
                let number = session * 1_000 + index
                let receipt = try await sink.store(photo(["capt0000.jpg"], bytes: "\(number) \(body)"), context: shot(number))
                names += receipt.files.map { ($0.location as NSString).lastPathComponent }
            }
        }
        #expect(names == ["capt0000.jpg"] + (2...2_000).map { "capt0000-\($0).jpg" })
        // Every file holds its own shot, and nothing else is in the folder.
        for (index, name) in names.enumerated() where index % 97 == 0 || index == 1_999 {
            let text = try String(contentsOfFile: folder.file(name), encoding: .utf8)
            #expect(text.hasPrefix("capt0000.jpg: \(index + 1) ") && text.count == "capt0000.jpg: \(index + 1) ".count + body.count, "\(name)")
        }
        #expect(folder.names().count == 2_000)
    }

    @Test("the limit on taken names fails the photo with the fix, and leaves no file behind")
    func takenNamesLimit() async throws {
        let folder = TemporaryDirectory("taken-limit", inMemory: true)
        let sink = try sink(folder, filename: "{name}.{ext}")
        _ = try await sink.store(photo(["a.jpg"]), context: shot(1))
        _ = try await sink.store(photo(["a.jpg"]), context: shot(2))  // a-2.jpg; the next try starts at a-3
        // Another program fills the folder with the next 10,000 names meanwhile.
        for number in 3...(CollisionSuffixes.probesPerFile + 2) {
            close(open(folder.file("a-\(number).jpg"), O_CREAT | O_WRONLY | O_CLOEXEC, 0o644))
        }
        do {
            _ = try await sink.store(photo(["a.jpg"]), context: shot(3))
            Issue.record("stored past the limit")
        } catch let error as ShutterError {
            #expect(error.cause == .storageUnavailable)
            #expect(error.message == "no free file name for '\(folder.path)/a.jpg': it and the next 9999 names were all taken", "\(error.message)")
            #expect(error.fix == "add {seq} to the 'filename' template, or move the earlier photos out of '\(folder.path)'")
        }
        #expect(folder.names().count == CollisionSuffixes.probesPerFile + 2)  // a.jpg … a-10002.jpg, no temporary file
    }

    @Test("temporary files nobody holds are removed whatever PID their name carries; one a live writer holds locked is kept")
    func staleTemporaryFiles() async throws {
        let folder = TemporaryDirectory("stale")
        // Names of earlier versions, which judged liveness by the PID in the name: one of a
        // PID long gone, and one of a PID now reused by a live process (this one, and 1).
        for name in [".shutterpipe-tmp-999999999-1.tmp", ".shutterpipe-tmp-\(getpid())-7.tmp", ".shutterpipe-tmp-1-2.tmp", ".shutterpipe-tmp-1-seq.tmp"] {
            try Data("partial".utf8).writeTestFile(folder.file(name))
        }
        // A writer in another process, alive, holding its file's lock (as a fallback write
        // on exFAT or NFS does while it runs).
        let held = ".shutterpipe-tmp-livewriter.tmp"
        try Data("in progress".utf8).writeTestFile(folder.file(held))
        let elsewhere = TemporaryDirectory("stale-writer")
        // It holds the lock until the test kills it: a timed hold ran out first when both
        // cores were busy and the store came 30 s later.
        let writer = try await RunningProcess.start(program: "/usr/bin/flock", ["--no-fork", folder.file(held), "sleep", "3600"], in: elsewhere.path)
        #expect(await eventually { (try? await runProgram(["flock", "--nonblock", folder.file(held), "true"]))?.status == 1 })  // locked
        _ = try await sink(folder).store(photo(), context: shot())
        #expect(folder.names() == [".shutterpipe-sequence", held, "portrait-0001.jpg"])
        // Killed, its lock goes with it, and the next start cleans the file.
        writer.signal(SIGKILL)
        _ = await writer.wait()
        try await sink(folder).begin()
        #expect(folder.names() == [".shutterpipe-sequence", "portrait-0001.jpg"])
    }

    @Test("the named fallback (exFAT, NFS) writes whole files, never over an existing one, and leaves no temporary file")
    func namedFallback() async throws {
        let folder = TemporaryDirectory("fallback")
        let path = folder.file("a.jpg")
        // Each write fsyncs: off the cooperative pool.
        #expect(try await offThePool { try DurableWriter.writeNew([Data("one".utf8), Data(" two".utf8)], to: path, unnamed: false) })
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "one two")
        #expect(try await !offThePool { try DurableWriter.writeNew([Data("other".utf8)], to: path, unnamed: false) })  // the name is taken
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "one two")
        #expect(try await offThePool { try DurableWriter.writeNew([Data("unnamed".utf8)], to: folder.file("b.jpg")) })
        #expect(folder.names() == ["a.jpg", "b.jpg"])
    }

    @Test("an unwritable folder fails with storageUnavailable and leaves nothing behind")
    func unwritable() async throws {
        let folder = TemporaryDirectory("readonly")
        let target = folder.file("locked")
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        // Root ignores permission bits, so make the folder a file's child instead: not writable for anyone.
        let blocker = folder.file("locked/blocker")
        try Data().writeTestFile(blocker)
        let sink = try sink(folder, directory: "\(blocker)/inside")
        do {
            _ = try await sink.store(photo(), context: shot())
            Issue.record("stored into a path under a file")
        } catch let error as ShutterError {
            #expect(error.cause == .storageUnavailable)
            #expect(error.message.contains(blocker))
        }
        #expect(folder.names("locked") == ["blocker"])
    }

    @Test("a damaged sequence file fails clearly instead of restarting the count")
    func damagedSequence() async throws {
        let folder = TemporaryDirectory("damaged")
        try Data("garbage".utf8).writeTestFile(folder.file(".shutterpipe-sequence"))
        do {
            _ = try await sink(folder).store(photo(), context: shot())
            Issue.record("stored despite a damaged sequence file")
        } catch let error as ShutterError {
            #expect(error.cause == .storageUnavailable)
            #expect(error.message.contains("is damaged"))
            #expect(error.fix?.contains("last used number") == true)
        }
    }

    @Test("free space is reported for the destination")
    func capacity() async throws {
        let folder = TemporaryDirectory("capacity")
        let sink = try sink(folder)
        #expect((await sink.availableCapacity() ?? 0) > 0)
    }
}
