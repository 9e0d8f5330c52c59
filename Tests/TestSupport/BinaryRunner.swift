#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeSupport
import Testing

/// A built executable of this package, next to the test bundle. A missing one is an
/// error that names where it was looked for: the test that needs it fails, the others run.
public func builtExecutable(_ name: String) throws -> String {
    var candidates: [String] = []
    if let executable = Bundle.main.executablePath {
        candidates.append(URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent(name).path)
    }
    candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name).path)
    candidates.append("\(repositoryRoot)/.build/debug/\(name)")
    for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    throw TestSupportError("the \(name) executable was not built (run `swift build --build-tests`); looked at \(candidates.joined(separator: ", "))")
}

/// The built `shutterpipe` executable, next to the test bundle.
public func shutterpipeBinary() throws -> String {
    try builtExecutable("shutterpipe")
}

/// What a finished process left.
public struct Outcome: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    /// Whether it was killed for running past the wait's timeout (the test failed then).
    public var timedOut = false
    public var lines: [String] { stdout.split(separator: "\n").map(String.init) }
}

/// Runs shutterpipe with `arguments`, feeding `input` and closing stdin.
public func shutterpipe(_ arguments: [String], input: String = "", in directory: String,
                        environment: [String: String] = [:], timeout: Duration = .seconds(120),
                        via launcher: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Outcome {
    let running = try await RunningProcess.start(program: try launcher ?? shutterpipeBinary(), arguments, in: directory, environment: environment)
    // Offered up front, as `echo capture | shutterpipe …` does: a program that ends
    // before reading it (a config refused at start) leaves it unread, which is no failure
    // of the test; what the program did with it is judged by its outcome.
    if !input.isEmpty { _ = running.write(Data(input.utf8)) }
    running.closeInput()
    return await running.wait(timeout: timeout, sourceLocation: sourceLocation)
}

/// Writes a config into `folder` and returns its path.
public func writeConfig(_ yaml: String, in folder: TemporaryDirectory, name: String = "studio.yaml") throws -> String {
    let path = folder.file(name)
    try yaml.writeTestFile(path)
    return path
}

/// How many shots a session's catalogue has recorded so far, from its `--verbose` log
/// ("catalogue: N shot(s) recorded"): a gate to wait on, cheaper than asking the
/// catalogue again and again.
public func shotsRecorded(in log: String) -> Int {
    log.split(separator: "\n").reduce(0) { total, line in
        guard let range = line.range(of: "catalogue: "), line.hasSuffix(" shot(s) recorded") else { return total }
        return total + (Int(line[range.upperBound...].prefix { $0.isNumber }) ?? 0)
    }
}

/// How many lines of `text` contain `what`.
public func count(_ what: String, in text: String) -> Int {
    text.components(separatedBy: "\n").filter { $0.contains(what) }.count
}
