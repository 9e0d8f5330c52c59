import Foundation
import Testing
import TestSupport

@Suite("calibrate focus: a lens swept on live view, measured, put back, and kept by name (real libgphoto2)", .timeLimit(.minutes(4)))
struct CalibrateFocusTests {
    @Test("a sweep from 1000 to 2600 mm of the virtual lens (sharp at 1800 mm): every position measured on its live frame, 1800 mm the sharpest with sharpness rising to it and falling after, the lens back at 800 mm, and the calibration kept under the camera's name, as --json says")
    func sweep() async throws {
        let camera = try await FakeCamera(["--lens"])
        let folder = TemporaryDirectory("calibrate-focus")
        let state = folder.file("state")
        let run = try await shutterpipe(["calibrate", "focus", "--port", camera.portSpec, "--from", "1000", "--to", "2600", "--settle", "20ms", "--json"], in: folder.path,
                                        environment: ["HOME": camera.home.path, "XDG_STATE_HOME": state])
        #expect(run.status == 0, "\(run.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)")
        #expect(report["sharpest"] as? String == "1800 mm", "\(run.stdout)")
        let calibration = try #require(report["calibration"] as? [String: Any])
        let positions = try #require(calibration["positions"] as? [[String: Any]])
        #expect(positions.compactMap { $0["value"] as? String } == stride(from: 1000, through: 2600, by: 50).map { "\($0) mm" })
        let sharpness = positions.compactMap { $0["sharpness"] as? Double }
        try #require(sharpness.count == 33)
        let peak = 16  // 1800 mm
        #expect(sharpness.indices.max { sharpness[$0] < sharpness[$1] } == peak, "\(sharpness)")
        #expect(sharpness[peak - 4] < sharpness[peak - 2] && sharpness[peak - 2] < sharpness[peak] && sharpness[peak] > sharpness[peak + 2] && sharpness[peak + 2] > sharpness[peak + 4],
                "sharpness rises to 1800 mm and falls after: \(sharpness)")
        // The camera's own record: each position set once, in order, then the lens put back.
        #expect(propertyLog(camera, "0x5009") == Array(stride(from: 1000, through: 2600, by: 50)) + [800], "\(camera.logText)")
        let kept = try #require(report["kept"] as? String)
        #expect(kept == "\(state)/shutterpipe/lenses/PTP_IP_Camera_SP-0001.json")
        let file = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: kept))) as? [String: Any])
        #expect(file["lens"] as? String == "PTP/IP Camera SP-0001" && (file["positions"] as? [Any])?.count == 33, "\(file)")
        let plan = try #require(report["stackPlan"] as? String)
        #expect(plan.hasPrefix("{kind: focus-stack, setting: focusdistance, from: ") && plan.contains("step: \(report["stackStep"] as? Int ?? 0)"), "\(plan)")
    }

    @Test("a camera without a lens to drive: the calibration says what the camera lacks and how to find its settings, keeps nothing, and exits 1")
    func noLens() async throws {
        let camera = try await FakeCamera()
        let folder = TemporaryDirectory("calibrate-none")
        let run = try await shutterpipe(["calibrate", "focus", "--port", camera.portSpec], in: folder.path,
                                        environment: ["HOME": camera.home.path, "XDG_STATE_HOME": folder.file("state")])
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        #expect(run.stderr.contains("PTP/IP Camera has no setting 'focusdistance'") && run.stderr.contains("`shutterpipe camera settings` lists its settings"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.file("state/shutterpipe/lenses")))
    }
}
