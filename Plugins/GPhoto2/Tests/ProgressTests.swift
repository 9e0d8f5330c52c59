#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeSupport
import Testing
import TestSupport

/// The frames of the status line a terminal showed: each redraw, its escape codes gone.
func statusFrames(_ typescript: String) -> [String] {
    typescript.replacingOccurrences(of: "\u{1B}[2K", with: "")
        .split(whereSeparator: { $0 == "\r" || $0 == "\n" })
        .map(String.init)
        .filter { $0.hasPrefix("● photo mode") || $0.hasPrefix("○ idle") }
}

@Suite("progress of the shot in flight on the status line, under a pseudo-terminal (real libgphoto2)", .timeLimit(.minutes(3)))
struct ProgressTests {
    @Test("capturing with its seconds, downloading with its percentage of the size, storing, then gone; two shots sent one at a time")
    func statusLineProgress() async throws {
        // A long exposure, and a 5 MB RAW file paced like a slow cable: each phase lasts
        // long enough for several redraws. (libgphoto2 fetches a generic PTP camera's file
        // over 1 MiB in 1 MiB pieces, so the percentage moves a piece at a time.) The file
        // is served as it is, so a loaded machine spends nothing making it.
        let folder = TemporaryDirectory("progress")
        let images = folder.file("images")
        try FileManager.default.createDirectory(atPath: images, withIntermediateDirectories: true)
        var raw = Data("SPRAW1 progress test\n".utf8)
        raw.append(Data(count: 5_000_000))  // cheap to make: a debug build's byte loops would load the suite
        try raw.writeTestFile("\(images)/IMG_0001.CR2")
        // The exposure is held at the camera's gate until the status line has counted it for
        // three redraws; the download is paced at 1 MB/s (5 s for several redraws).
        let gate = try FileGate(in: folder)
        let camera = try await FakeCamera(["--images", images, "--link-speed", "1", "--gate", gate.path])
        // The capture's deadline covers the held exposure and the 5 s download: generous.
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out")).replacingOccurrences(of: "captureTimeout: 30s", with: "captureTimeout: 120s"),
                                     in: folder)
        let typescript = folder.file("typescript")
        // script(1) gives shutterpipe a terminal: the status line is drawn only on one.
        let command = "\(try shutterpipeBinary()) run --config \(config)"
        let terminal = try await RunningProcess.start(program: "/usr/bin/script", ["-qefc", command, typescript], in: folder.path,
                                          environment: ["HOME": camera.home.path, "TERM": "xterm", "COLUMNS": "300"])
        @Sendable func screen() -> String { (try? String(contentsOfFile: typescript, encoding: .utf8)) ?? "" }
        func answered(_ count: Int) async -> Bool {
            await eventually(timeout: .seconds(60)) { screen().components(separatedBy: "photoSuccess").count > count }
        }
        terminal.send("enter\n")
        #expect(await eventually { screen().contains("enteredPhotoMode") }, "\(screen().suffix(2000))")
        for shot in 1...2 {
            terminal.send("capture\n")
            #expect(await eventually { Self.capturingSeconds(shot, in: statusFrames(screen())).count >= 3 }, "\(screen().suffix(3000))")
            try gate.release()
            #expect(await answered(shot), "\(screen().suffix(3000))")
        }
        terminal.send("\u{04}")  // Ctrl-D: end of input on a terminal
        let outcome = await terminal.wait(timeout: .seconds(30))
        #expect(outcome.status == 0, "\(screen().suffix(2000))")

        let frames = statusFrames(screen())
        let stored = folder.names("out").filter { $0.hasSuffix(".cr2") }.sorted()
        #expect(stored.count == 2)
        for (index, name) in stored.enumerated() {
            let shot = "shot \(index + 1) "
            let phases = frames.compactMap { frame -> String? in
                guard let range = frame.range(of: shot) else { return nil }
                return String(frame[range.upperBound...].prefix { $0 != "·" }).trimmingCharacters(in: .whitespaces)
            }
            // Capturing, its seconds counting while the exposure lasts.
            let seconds = Self.capturingSeconds(index + 1, in: frames)
            #expect(seconds.count >= 3 && seconds == seconds.sorted(), "\(shot): \(phases)")
            // Downloading: the percentages climb, of the file's size as stored.
            let size = try #require(try FileManager.default.attributesOfItem(atPath: folder.file("out/\(name)"))[.size] as? Int)
            let downloads = phases.filter { $0.hasPrefix("downloading ") }
            #expect(downloads.allSatisfy { $0.hasSuffix(" % of \(formatByteCount(Int64(size)))") }, "\(downloads) (\(size) bytes)")
            let percentages = downloads.compactMap { Int($0.dropFirst(12).prefix { $0.isNumber }) }
            #expect(Set(percentages).count >= 3 && percentages == percentages.sorted() && percentages.allSatisfy { $0 <= 100 },
                    "\(shot): \(phases)")
            // Then storing, and the phases came in that order.
            let order = phases.map { $0.split(separator: " ").first.map(String.init) ?? "" }
            let firstOf = { (phase: String) in order.firstIndex(of: phase) ?? -1 }
            let lastOf = { (phase: String) in order.lastIndex(of: phase) ?? Int.max }
            #expect(order.contains("storing") && lastOf("capturing") < firstOf("downloading") && lastOf("downloading") < firstOf("storing"),
                    "\(shot): \(phases)")
        }
        // Nothing in flight once answered: the last frame shows no shot.
        #expect(frames.last.map { !$0.contains("shot 1 ") && !$0.contains("shot 2 ") } == true, "\(frames.suffix(3))")
    }

    /// The seconds shown for `shot` while capturing, frame by frame.
    static func capturingSeconds(_ shot: Int, in frames: [String]) -> [Double] {
        frames.compactMap { frame -> Double? in
            guard let range = frame.range(of: "shot \(shot) capturing ") else { return nil }
            return Double(frame[range.upperBound...].prefix { $0.isNumber || $0 == "." })
        }
    }
}
