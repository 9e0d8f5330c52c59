#if canImport(Glibc)
import Glibc
#endif
@testable import FilesSink
import Foundation
import ShutterPipeKit
import TestSupport
import Testing

/// Issue 42's first defect: `{seq}` was read back from digits in names, and a label's
/// digits were taken for it.
@Suite("files sink: {seq} is owned, never guessed from a name", .timeLimit(.minutes(2)))
struct SequenceOwnershipTests {
    func labelled(_ number: Int, _ label: String, camera: String = "A") -> ShotContext {
        var context = shot(number, camera: camera)
        context.label = label
        return context
    }

    @Test("a label with digits before {seq}: numbering continues after a restart (0003, never 1235), and after the counter file was lost")
    func labelDigits() async throws {
        let folder = TemporaryDirectory("seq-label")
        let template = "{label}-{seq:04}-{camera}.{ext}"
        for number in 1...2 { _ = try await sink(folder, filename: template).store(photo(), context: labelled(number, "ORDER-1234")) }
        // A restart: a new sink on the same folder, as a new session makes.
        let third = try await sink(folder, filename: template).store(photo(), context: labelled(3, "ORDER-1234"))
        #expect(third.files.first.map { PathNameOf($0.location) } == "ORDER-1234-0003-A.jpg")
        let other = try await sink(folder, filename: template).store(photo(), context: labelled(4, "SKU-100236"))
        #expect(other.files.first.map { PathNameOf($0.location) } == "SKU-100236-0004-A.jpg")
        // The counter file lost: the names are read, and the label's digits are not the number.
        try FileManager.default.removeItem(atPath: folder.file(".shutterpipe-sequence"))
        let recovered = try await sink(folder, filename: template).store(photo(), context: labelled(5, "nolabel-99"))
        #expect(recovered.files.first.map { PathNameOf($0.location) } == "nolabel-99-0005-A.jpg")
        let glued = TemporaryDirectory("seq-glued")
        for number in 1...2 { _ = try await sink(glued, filename: "{label}{seq:04}.{ext}").store(photo(), context: labelled(number, "B12")) }
        try FileManager.default.removeItem(atPath: glued.file(".shutterpipe-sequence"))
        let next = try await sink(glued, filename: "{label}{seq:04}.{ext}").store(photo(), context: labelled(3, "B12"))
        #expect(next.files.first.map { PathNameOf($0.location) } == "B120003.jpg")
    }

    @Test("two sessions writing one folder at once never hand out one number twice: 2 × 40 shots, 80 numbers, no name taken twice")
    func twoSessionsOneFolder() async throws {
        let folder = TemporaryDirectory("seq-two")
        let out = folder.file("out")
        let config = try writeConfig("""
        version: 1
        session: two
        backend: {type: file-stub, width: 64, height: 48}
        triggers: [{type: stdin}]
        catalogue: off
        sinks: [{type: files, directory: \(out), filename: "{seq:04}.{ext}"}]
        """, in: folder)
        var sessions: [RunningProcess] = []
        for _ in 0..<2 { sessions.append(try await RunningProcess.start(["run", "--config", config, "--no-status"], in: folder.path)) }
        for session in sessions { session.send(String(repeating: "capture\n", count: 40)) }
        for session in sessions {
            await session.waitForOutput(on: .stdout, "40 answers") { count("photoSuccess", in: $0) >= 40 }
            session.closeInput()
            #expect(await session.wait(timeout: .seconds(60)).status == 0)
        }
        let names = folder.names("out").filter { !$0.hasPrefix(".") }
        #expect(names == (1...80).map { String(format: "%04d.jpg", $0) }, "\(names)")
    }
}

/// A path's last component.
private func PathNameOf(_ path: String) -> String { (path as NSString).lastPathComponent }
