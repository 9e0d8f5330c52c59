#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import StdinTrigger
import Synchronization
import TestSupport
import Testing

/// Feeds `input` through a real pipe into a `StdinTrigger` and collects what it sends.
func events(from input: String, interactive: Bool = false) async throws -> [TriggerEvent] {
    var descriptors: [Int32] = [0, 0]
    #expect(pipe(&descriptors) == 0)
    let bytes = Array(input.utf8)
    _ = bytes.withUnsafeBytes { write(descriptors[1], $0.baseAddress, $0.count) }
    close(descriptors[1])
    defer { close(descriptors[0]) }
    let sent = Mutex<[TriggerEvent]>([])
    let trigger = StdinTrigger(input: descriptors[0], interactive: interactive) { _ in }
    try await withDeadline(.seconds(60), "stdin trigger") {
        // Answer every event, as the coordinator does: the trigger reads on only then.
        try await trigger.run(delivering: EventChannel { event in
            sent.withLock { $0.append(event) }
            Task { await ShutterAnswer(request: event, state: .enteredPhotoMode).deliver(to: trigger) }
        })
    }
    return sent.withLock { $0 }
}

@Suite("stdin trigger", .timeLimit(.minutes(2)))
struct StdinTriggerTests {
    @Test("lines become events; anything else is unknown; end of input means exit")
    func lines() async throws {
        let sent = try await events(from: "enter\n  CAPTURE \r\ncapture\nselfie\n\nexit\ncapture")
        #expect(sent.map(\.event) == [.enter, .capture, .capture, .unknown, .unknown, .exit, .capture, .exit])
        #expect(sent.first?.origin == "line 1")
        #expect(sent.last?.origin == "end of input")
    }

    @Test("no extra exit when the input ended with exit, or was empty")
    func noDoubleExit() async throws {
        #expect(try await events(from: "enter\ncapture\nexit\n").map(\.event) == [.enter, .capture, .exit])
        #expect(try await events(from: "").isEmpty)
    }

    @Test("on a terminal, Enter alone means capture")
    func interactiveEnter() async throws {
        #expect(try await events(from: "\n\nexit\n", interactive: true).map(\.event) == [.capture, .capture, .exit])
    }

    @Test("each answer is printed as one line starting with the state's name, in line order")
    func answerLines() async throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        _ = Array("capture\ncapture\nenter\ncapture\n".utf8).withUnsafeBytes { write(descriptors[1], $0.baseAddress, $0.count) }
        close(descriptors[1])
        defer { close(descriptors[0]) }
        let printed = Mutex<[String]>([])
        let trigger = StdinTrigger(input: descriptors[0], interactive: false) { line in printed.withLock { $0.append(line) } }
        let answers = Mutex([
            { (request: TriggerEvent) in ShutterAnswer(request: request, state: .photoSuccess, stored: [StoredFile(location: "/shots/a.jpg", byteCount: 1),
                                                                                                    StoredFile(location: "/shots/a.cr2", byteCount: 1)]) },
            { request in ShutterAnswer(request: request, state: .photoFailed, failure: ShutterError(.storageUnavailable, "disk full: /shots", fix: "free space")) },
            { request in ShutterAnswer(request: request, state: .enteredPhotoMode) },
            { request in ShutterAnswer(request: request, state: .photoSuccess, stored: [StoredFile(location: "/b.jpg", byteCount: 1)], warnings: ["truncated JPEG"]) },
            { request in ShutterAnswer(request: request, state: .exitedOrUnableToEnter) },
        ] as [@Sendable (TriggerEvent) -> ShutterAnswer])
        // Answered one at a time in arrival order, as the coordinator does.
        let (arrived, arrival) = AsyncStream.makeStream(of: TriggerEvent.self)
        let coordinator = Task { for await event in arrived { await answers.withLock { $0.removeFirst() }(event).deliver(to: trigger) } }
        try await withDeadline(.seconds(60), "stdin trigger") {
            try await trigger.run(delivering: EventChannel { event in arrival.yield(event) })
        }
        #expect(await eventually { printed.withLock { $0.count } == 5 })
        arrival.finish()
        await coordinator.value
        #expect(printed.withLock { $0 } == [
            "photoSuccess /shots/a.jpg /shots/a.cr2",
            "photoFailed storageUnavailable: disk full: /shots (free space)",
            "enteredPhotoMode",
            "photoSuccess /b.jpg (warning: truncated JPEG)",
            "exitedOrUnableToEnter",
        ])
    }

    @Test("at most linesAhead lines run ahead of their answers")
    func backpressure() async throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        defer { close(descriptors[0]) }
        _ = Array(String(repeating: "capture\n", count: 8).utf8).withUnsafeBytes { write(descriptors[1], $0.baseAddress, $0.count) }
        close(descriptors[1])
        let sent = Mutex<[TriggerEvent]>([])
        let trigger = StdinTrigger(input: descriptors[0], interactive: false) { _ in }
        let task = Task { try await trigger.run(delivering: EventChannel { event in sent.withLock { $0.append(event) } }) }
        let ahead = StdinTrigger.linesAhead
        #expect(await eventually { sent.withLock { $0.count } == ahead })
        // Nothing answered yet: no more events out. (The pause only gives a trigger that
        // broke the rule time to show it; the rule passes without it.)
        try await Task.sleep(for: .milliseconds(100))
        #expect(sent.withLock { $0.count } == ahead)
        await ShutterAnswer(request: sent.withLock { $0[0] }, state: .photoSuccess).deliver(to: trigger)
        #expect(await eventually { sent.withLock { $0.count } == ahead + 1 })
        task.cancel()
    }

    @Test("cancellation ends a trigger blocked on input")
    func cancellation() async throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        defer { close(descriptors[0]); close(descriptors[1]) }
        let trigger = StdinTrigger(input: descriptors[0], interactive: false) { _ in }
        let sent = Mutex(0)
        let task = Task { try await trigger.run(delivering: EventChannel { _ in sent.withLock { $0 += 1 } }) }
        // A first line read proves it runs; it then blocks on the next, which never comes.
        _ = Array("capture\n".utf8).withUnsafeBytes { write(descriptors[1], $0.baseAddress, $0.count) }
        #expect(await eventually { sent.withLock { $0 } == 1 })
        task.cancel()
        try await withDeadline(.seconds(60), "cancelled trigger") { try await task.value }
    }
}

@Suite("stdin trigger: camera settings lines", .timeLimit(.minutes(1)))
struct StdinSettingsTests {
    @Test("set KEY=VALUE… and get [KEY…] lines become settings requests; their answers and a malformed set's refusal are printed in line order")
    func settingsLines() async throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        let input = "capture\nset\nset iso=400 shutterspeed=1/200\nget iso\nset iso400\ncapture\n"
        _ = Array(input.utf8).withUnsafeBytes { write(descriptors[1], $0.baseAddress, $0.count) }
        close(descriptors[1])
        defer { close(descriptors[0]) }
        let printed = Mutex<[String]>([])
        let requests = Mutex<[SettingsRequest]>([])
        let trigger = StdinTrigger(input: descriptors[0], interactive: false) { line in printed.withLock { $0.append(line) } }
        try await withDeadline(.seconds(60), "stdin trigger") {
            try await trigger.run(delivering: EventChannel({ event in
                // A slow shot: the lines after it wait their turn.
                Task {
                    try? await Task.sleep(for: .milliseconds(200))
                    await ShutterAnswer(request: event, state: event.event == .capture ? .photoSuccess : .exitedOrUnableToEnter).deliver(to: trigger)
                }
            }, settings: { request, answer in
                requests.withLock { $0.append(request) }
                answer(SettingsAnswer(request: request, settings: [CameraSetting(key: "iso", label: "ISO", kind: .menu, value: "400")]))
            }))
        }
        #expect(requests.withLock { $0.map(\.action) } == [.change([SettingChange(key: "iso", value: "400"), SettingChange(key: "shutterspeed", value: "1/200")]),
                                                          .read(["iso"])])
        #expect(requests.withLock { $0.map(\.origin) } == ["line 3", "line 4"])
        // Give the last answers a moment to be written.
        _ = await eventually(timeout: .seconds(60)) { printed.withLock { $0.count } >= 7 }
        let lines = printed.withLock { $0 }
        #expect(lines.first == "photoSuccess", "\(lines)")
        #expect(lines.dropFirst().first == "settingsRefused invalidConfiguration: set names no setting (write set iso=400 shutterspeed=1/200)", "\(lines)")
        #expect(lines.contains("settingsApplied iso=400") && lines.contains("settings iso=400"))
        #expect(lines.contains("settingsRefused invalidConfiguration: 'iso400' is not KEY=VALUE (write set iso=400 shutterspeed=1/200)"))
        #expect(lines.firstIndex(of: "settingsApplied iso=400")! < lines.firstIndex(of: "settings iso=400")!)
    }
}
