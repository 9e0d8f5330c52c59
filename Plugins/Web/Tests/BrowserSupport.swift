import Foundation
import TestSupport
import Testing

/// What a run of Tests/Browser/cdp.py printed: one JSON object per step.
struct BrowserRun {
    var steps: [[String: Any]]
    var output: String

    /// The value of the `eval:` step of `expression`.
    func value(_ expression: String) -> Any? {
        steps.last { $0["eval"] as? String == expression }?["value"] ?? nil
    }

    /// The values of every `eval:` step of `expression`, in order.
    func values(_ expression: String) -> [Any] {
        steps.filter { $0["eval"] as? String == expression }.compactMap { $0["value"] }
    }

    /// That value, a JSON text in the page (`JSON.stringify`), parsed.
    func json(_ expression: String) -> Any? {
        (value(expression) as? String).flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8), options: [.fragmentsAllowed]) }
    }
}

/// One browser at a time: a Chromium takes a core to start and several processes to run,
/// and the tests beside it (in this process, on two cores) must not starve.
actor BrowserGate {
    static let shared = BrowserGate()
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func enter() async {
        if !busy { busy = true; return }
        await withCheckedContinuation { waiting.append($0) }
    }

    func leave() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }
}

/// Opens `path` of the web trigger on `port` in a real Chromium and runs `steps` (see
/// Tests/Browser/cdp.py); the browser and its processes are killed after `timeout` (which
/// counts from when the browser may start: one runs at a time). A step that fails fails
/// the test, with the page's text and the session's log.
func browse(_ port: UInt16, _ path: String = "/", _ steps: [String], session: RunningProcess? = nil, timeout: Duration = .seconds(240),
            sourceLocation: SourceLocation = #_sourceLocation) async throws -> BrowserRun {
    await BrowserGate.shared.enter()
    defer { Task { await BrowserGate.shared.leave() } }
    let run = try await runProgram(["python3", "\(repositoryRoot)/Tests/Browser/cdp.py", "http://127.0.0.1:\(port)\(path)"] + steps, timeout: timeout)
    let output = String(decoding: run.data, as: UTF8.self)
    #expect(run.status == 0, "\(output) \(run.errors) \(session?.stderrSoFar.suffix(1500) ?? "")", sourceLocation: sourceLocation)
    let lines = output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    return BrowserRun(steps: lines, output: output)
}

/// Runs Tests/Browser/pixels.py (Pillow: the independent reader of images) and parses its
/// JSON answer.
func pillow(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
    let run = try await runProgram(["/usr/bin/python3", "\(repositoryRoot)/Tests/Browser/pixels.py"] + arguments, timeout: .seconds(120))
    try #require(run.status == 0, "pixels.py \(arguments): \(run.errors)", sourceLocation: sourceLocation)
    return try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any], sourceLocation: sourceLocation)
}
