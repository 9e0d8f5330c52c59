import Foundation
import ShutterPipeKit
@testable import ShutterPipeRuntime
import Testing
import TestSupport

@Suite("rule 17: sequences", .timeLimit(.minutes(2)))
struct SequenceRuleTests {
    static func settings(_ plans: [SequencePlan]) -> CoordinatorSettings {
        var settings = CoordinatorSettings()
        for plan in plans { settings.sequences[plan.name] = plan }
        return settings
    }

    static var isoBracket: SequencePlan {
        var plan = SequencePlan(name: "bracket", kind: .bracket, frames: 3)
        plan.setting = "iso"
        return plan
    }

    @Test("rule 17: a bracket of ISO around 200 is one turn: 200, 100, 400, each frame answered to the trigger, no capture or store during a change (rule 15), 200 put back, then the capture queued after it; answered once")
    func oneTurn() async throws {
        let timeline = Timeline()
        let backend = SettingsBackend(timeline: timeline)
        let sink = RecordingSink(timeline: timeline)
        let trigger = ScriptedTrigger([.send(.enter), .settings(SettingsRequest(.change([SettingChange(key: "iso", value: "200")]))), .sequence("bracket"),
                                       .send(.capture), .send(.exit)])
        let status = try await runToEnd([trigger], backend: backend, sinks: [sink], settings: Self.settings([Self.isoBracket]))
        #expect(sink.photos.map { $0.files[0].name } == ["ISO200_1.JPG", "ISO100_2.JPG", "ISO400_3.JPG", "ISO200_4.JPG"])
        #expect(trigger.answers.map(\.state) == [.enteredPhotoMode, .photoSuccess, .photoSuccess, .photoSuccess, .photoSuccess, .exitedOrUnableToEnter])
        #expect(trigger.sequenceAnswers.map(\.summary) == ["sequenceDone bracket: 3 of 3 taken"])
        var inside = false
        for entry in timeline.all {
            if entry == "apply began" { inside = true } else if entry == "apply ended" { inside = false } else {
                #expect(!inside, "\(entry) during an apply: \(timeline.all)")
            }
        }
        #expect(status.photosStored == 4)
    }

    @Test("rule 17: an exit that arrives while a frame is held cancels the sequence after it: that frame answered, the rest cancelled, the setting put back, the exit answered last")
    func exitCancels() async throws {
        let gate = Gate("frame 2")
        let timeline = Timeline()
        let backend = SettingsBackend(timeline: timeline, captureGate: gate)
        gate.release(1)
        let trigger = ScriptedTrigger([.send(.enter), .settings(SettingsRequest(.change([SettingChange(key: "iso", value: "200")]))), .sequence("bracket"),
                                       .awaitArrivals(gate, 2), .send(.exit), .open(gate)])
        let coordinatorSettings = Self.settings([Self.isoBracket])
        _ = try await runToEnd([trigger], backend: backend, settings: coordinatorSettings)
        #expect(trigger.sequenceAnswers.map(\.summary) == ["sequenceCancelled bracket: 2 of 3 taken, 1 cancelled (exit from t0)"])
        #expect(trigger.answers.map(\.state) == [.enteredPhotoMode, .photoSuccess, .photoSuccess, .exitedOrUnableToEnter])
        let values = try await backend.settings(["iso"], camera: nil).first?.value
        #expect(values == "200")
    }

    @Test("rule 17: an unknown sequence is refused at once with the names planned; a plan the camera cannot step (a shutter bracket where the backend has no 'shutterspeed') is refused with the fix; nothing is captured")
    func refusals() async throws {
        var shutter = SequencePlan(name: "shutter", kind: .bracket, frames: 3)
        shutter.setting = "shutterspeed"
        let trigger = ScriptedTrigger([.send(.enter), .sequence("nope"), .sequence("shutter")])
        let status = try await runToEnd([trigger], backend: SettingsBackend(timeline: Timeline()), settings: Self.settings([Self.isoBracket, shutter]))
        let answers = trigger.sequenceAnswers
        #expect(answers.count == 2)
        #expect(answers.first?.failure?.message == "no sequence 'nope' in the config" && answers.first?.failure?.fix == "the sequences are: bracket, shutter")
        #expect(answers.last?.failure?.message.contains("shutterspeed") == true && answers.last?.summary.hasPrefix("sequenceRefused") == true, "\(answers)")
        #expect(status.photosStored == 0)
    }

    @Test("a plan's frames against a camera: a bracket takes the nearest value on each side not taken yet, a focus stack's positions past the lens's range are refused with the fix, a relative drive steps and comes back")
    func planning() throws {
        let shutter = CameraSetting(key: "shutterspeed", label: "Shutter", kind: .menu, value: "1/125",
                                    choices: ["1", "1/2", "1/30", "1/125", "1/250", "1/500", "1/1000"])
        var bracket = SequencePlan(name: "b", kind: .bracket, frames: 5)
        bracket.setting = "shutterspeed"
        let (steps, restore) = try bracket.steps(shutter)
        #expect(steps.map(\.frame.value) == ["1/125", "1/250", "1/30", "1/500", "1/2"])
        #expect(restore.map(\.value) == ["1/125"])
        var stack = SequencePlan(name: "s", kind: .focusStack, frames: 9)
        stack.from = 3000
        stack.step = 4
        let lens = CameraSetting(key: "focusdistance", label: "Focus", kind: .menu, value: "800 mm", choices: stride(from: 300, through: 3300, by: 50).map { "\($0) mm" })
        #expect(throws: ShutterError.self) { try stack.steps(lens) }
        var drive = SequencePlan(name: "d", kind: .focusStack, frames: 4)
        drive.step = 10
        drive.farToNear = true
        let manual = CameraSetting(key: "manualfocusdrive", label: "Drive", kind: .range, value: "0", choices: [])
        let (driveSteps, back) = try drive.steps(manual)
        #expect(driveSteps.map { $0.changes.map(\.value) } == [[], ["-10"], ["-10"], ["-10"]])
        #expect(back.map(\.value) == ["30"])
    }
}
