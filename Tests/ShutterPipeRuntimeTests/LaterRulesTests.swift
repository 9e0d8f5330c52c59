import Foundation
import ShutterPipeKit
import ShutterPipeRuntime
import ShutterPipeSupport
import TestSupport
import Testing

/// Rules 14 to 16 of the coordinator: a capture for a later moment, and setting changes
/// and the session label serialised with captures.
@Suite("Coordinator rules 14 to 16: a later moment, settings, the session label", .timeLimit(.minutes(2)))
struct LaterRulesTests {
    @Test("rule 14: a capture for a later moment fires no earlier, and its deadline is captureTimeout plus the wait")
    func laterMoment() async throws {
        // The wait (8 s from the moment the capture is sent, however slow the enter was) is
        // longer than captureTimeout (5 s), which leaves the capture itself, instant here,
        // five seconds for a pool starved at the start of a full run to hand it back.
        var settings = CoordinatorSettings()
        settings.captureTimeout = .seconds(5)
        let backend = SettingsBackend(timeline: Timeline(), captureDelay: .zero)
        let trigger = ScriptedTrigger([.send(.enter), .awaitAnswers(1), .captureAfter(.seconds(8))])
        try await runToEnd([trigger], backend: backend, settings: settings)
        #expect(trigger.answers.last?.state == .photoSuccess, "\(trigger.answers)")
        let fired = try #require(backend.captureStarts.first)
        let moment = try #require(trigger.answers.last?.request.fireAt)
        #expect(fired.timeIntervalSince(moment) > -0.005, "fired \(moment.timeIntervalSince(fired)) s early")
    }

    static func change(_ iso: String) -> ScriptedTrigger.Step {
        .settings(SettingsRequest(.change([SettingChange(key: "iso", value: iso)]), origin: "test"))
    }

    @Test("rule 15: a change sent between captures is applied after the first capture and its store, before the next; the next photo has the new value")
    func serialisedWithCaptures() async throws {
        let timeline = Timeline()
        let backend = SettingsBackend(timeline: timeline)
        let sink = RecordingSink(delay: .milliseconds(150), timeline: timeline)  // a store outlasts a capture
        // Sent all at once: the rule is about what waits for what.
        let trigger = ScriptedTrigger([.send(.enter), .send(.capture), Self.change("400"), .send(.capture), Self.change("150"),
                                       .send(.capture), .settings(SettingsRequest(.read(["iso"]))), .send(.exit)])
        let status = try await runToEnd([trigger], backend: backend, sinks: [sink])
        #expect(sink.photos.map { $0.files[0].name } == ["ISO100_1.JPG", "ISO400_2.JPG", "ISO400_3.JPG"])
        let events = timeline.all
        let applied = try #require(timeline.index(of: "apply began"))
        // After capture 1 and its store were over; before capture 2 began.
        #expect(try #require(timeline.index(of: "capture 1 ended")) < applied)
        #expect(try #require(timeline.index(of: "store 1 ended")) < applied, "\(events)")
        #expect(try #require(timeline.index(of: "apply ended")) < (try #require(timeline.index(of: "capture 2 began"))), "\(events)")
        // Nothing ran during any apply.
        var inside = false
        for entry in events {
            if entry == "apply began" { inside = true } else if entry == "apply ended" { inside = false } else {
                #expect(!inside, "\(entry) during an apply: \(events)")
            }
        }
        let answers = trigger.settingsAnswers
        #expect(answers.count == 3)
        #expect(answers[0].failure == nil && answers[0].settings.map(\.value) == ["400"])
        // Refused: the cause, the setting as it is with its choices, and nothing changed.
        #expect(answers[1].failure?.cause == .invalidConfiguration)
        #expect(answers[1].failure?.message.contains("choices: 100, 200, 400, 800") == true)
        #expect(answers[1].settings.first?.value == "400" && answers[1].settings.first?.choices == SettingsBackend.choices)
        #expect(answers[2].failure == nil && answers[2].settings.first?.value == "400")
        #expect(answers[1].summary.hasPrefix("settingsRefused invalidConfiguration: iso '150' is not offered"))
        #expect(answers[0].summary == "settingsApplied iso=400")
        // Settings requests are not shutter events: the refusal counts as no failed event.
        #expect(status.eventsAnswered == 5 && status.eventsFailed == 0 && status.photosStored == 3)
        #expect(trigger.answers.map(\.state) == [.enteredPhotoMode, .photoSuccess, .photoSuccess, .photoSuccess, .exitedOrUnableToEnter])
    }

    @Test("rule 15: outside photo mode a change enters first, as a capture does; with autoEnter off it is refused with notInPhotoMode")
    func entersFirst() async throws {
        let backend = SettingsBackend(timeline: Timeline())
        let trigger = ScriptedTrigger([Self.change("800"), .send(.capture)])
        try await runToEnd([trigger], backend: backend)
        #expect(backend.prepares == 1)
        #expect(trigger.settingsAnswers.first?.failure == nil)
        #expect(trigger.answers.first?.stored.isEmpty == false)

        var settings = CoordinatorSettings()
        settings.autoEnter = false
        let strict = ScriptedTrigger([Self.change("800")])
        let idle = SettingsBackend(timeline: Timeline())
        try await runToEnd([strict], backend: idle, settings: settings)
        #expect(strict.settingsAnswers.first?.failure?.cause == .notInPhotoMode)
        #expect(idle.prepares == 0)
    }

    @Test("rule 15: a backend without camera settings refuses every request, naming itself")
    func backendWithoutSettings() async throws {
        let trigger = ScriptedTrigger([.send(.enter), Self.change("400"), .settings(SettingsRequest(.read([])))])
        try await runToEnd([trigger], backend: ScriptedBackend())
        #expect(trigger.settingsAnswers.count == 2)
        for answer in trigger.settingsAnswers {
            #expect(answer.failure?.description == "the backend 'scripted' has no camera settings to read or change (settings need a camera backend, such as gphoto2)")
        }
    }

    @Test("rules 3 and 15: a settings request counts against the queue bound, and beyond it is refused as busy at once")
    func boundedQueue() async throws {
        var settings = CoordinatorSettings()
        settings.queueLimit = 1
        let gate = Gate("capture gate")
        let backend = SettingsBackend(timeline: Timeline(), captureDelay: .zero, captureGate: gate)
        // Capture 1 is held in the backend; capture 2 takes the one place; the change is refused.
        let trigger = ScriptedTrigger([.send(.enter), .awaitAnswers(1), .send(.capture), .awaitArrivals(gate, 1), .send(.capture),
                                       Self.change("400"), .open(gate), .send(.exit)])
        try await runToEnd([trigger], backend: backend, settings: settings)
        let answer = try #require(trigger.settingsAnswers.first)
        #expect(answer.failure?.cause == .busy, "\(answer)")
        #expect(answer.failure?.message.contains("the settings were not changed") == true)
    }

    @Test("rule 16: a label takes its turn among the events: the shots after it carry it until another replaces it or an empty one clears it; a new session starts without one")
    func sessionLabel() async throws {
        let sink = RecordingSink(delay: .milliseconds(50))  // a store still running when the label arrives
        // Sent all at once: the label waits for the capture before it, not the other way.
        let trigger = ScriptedTrigger([.send(.enter), .send(.capture), .label("ACME-1"), .send(.capture), .send(.capture),
                                       .label("ACME-2"), .send(.capture), .label(""), .send(.capture), .send(.exit)])
        _ = try await runToEnd([trigger], backend: ScriptedBackend(), sinks: [sink])
        #expect(trigger.answers.filter { $0.request.event == .capture }.map(\.label) == [nil, "ACME-1", "ACME-1", "ACME-2", nil], "\(trigger.answers)")
        #expect(trigger.labelAnswers.map(\.label) == ["ACME-1", "ACME-2", nil] && trigger.labelAnswers.allSatisfy { $0.failure == nil })
        // Labels are not shutter events, and a new coordinator (a restart) has none.
        let next = ScriptedTrigger(events: [.capture])
        _ = try await runToEnd([next], backend: ScriptedBackend())
        #expect(next.answers.map(\.label) == [nil])
    }

    @Test("every numbered rule of the coordinator has a test named after it")
    func everyRuleHasItsTest() throws {
        let coordinator = try String(contentsOfFile: "\(repositoryRoot)/Sources/ShutterPipeRuntime/ShutterCoordinator.swift", encoding: .utf8)
        let rules = coordinator.split(separator: "\n").compactMap { line in
            line.firstMatch(of: #/^/// (\d+)\. \*\*/#).map { Int($0.1)! }
        }
        #expect(rules == Array(1...rules.count) && rules.count >= 16, "\(rules)")
        let folder = "\(repositoryRoot)/Tests/ShutterPipeRuntimeTests"
        let tests = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".swift") }
            .map { try String(contentsOfFile: "\(folder)/\($0)", encoding: .utf8) }.joined()
        for rule in rules {
            #expect(tests.contains("@Test(\"rule \(rule):") || tests.contains("@Test(\"rules \(rule) "), "rule \(rule) has no test named after it")
        }
    }
}
