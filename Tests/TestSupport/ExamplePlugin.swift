import Foundation

/// The example plugin (Plugins/Examples/ManifestSink), built outside this package: built
/// once per test run (an incremental build: a plugin built against an older SDK would be
/// refused), however many tests ask at once. Returns the path of its shared library.
public func examplePlugin() async throws -> String {
    try await ExamplePluginBuild.shared.library()
}

private actor ExamplePluginBuild {
    static let shared = ExamplePluginBuild()
    private var built: Task<String, any Error>?

    func library() async throws -> String {
        if built == nil {
            built = Task {
                let package = "\(repositoryRoot)/Plugins/Examples/ManifestSink"
                // A first build of the plugin's package takes minutes on a loaded machine.
                let build = try await runProgram(["swift", "build", "--package-path", package], timeout: .seconds(900))
                guard build.status == 0 else { throw TestSupportError("building the example plugin failed: \(build.text.suffix(2000))\(build.errors.suffix(2000))") }
                return "\(package)/.build/debug/libShutterPipeManifest.so"
            }
        }
        return try await built!.value
    }
}

/// The example plugin built against the previous contract revision's SDK
/// (Tests/Fixtures/previous-contract.tar.xz, made by scripts/snapshot-contract): built
/// once per test run, in .build/previous-contract. Returns the contract it was built
/// against ("9.0") and the path of its shared library.
public func previousContractPlugin() async throws -> (contract: String, library: String) {
    try await PreviousContractBuild.shared.library()
}

private actor PreviousContractBuild {
    static let shared = PreviousContractBuild()
    private var built: Task<(contract: String, library: String), any Error>?

    func library() async throws -> (contract: String, library: String) {
        if built == nil {
            built = Task {
                let fixtures = "\(repositoryRoot)/Tests/Fixtures"
                let note = try String(contentsOfFile: "\(fixtures)/previous-contract.txt", encoding: .utf8)
                guard let contract = note.split(separator: "\n").first(where: { $0.hasPrefix("contract ") })?.dropFirst(9),
                      let commit = note.split(separator: "\n").first(where: { $0.hasPrefix("commit ") })?.dropFirst(7) else {
                    throw TestSupportError("Tests/Fixtures/previous-contract.txt names no contract and commit")
                }
                let folder = "\(repositoryRoot)/.build/previous-contract/\(commit)"
                if !FileManager.default.fileExists(atPath: "\(folder)/Plugins/Examples/ManifestSink/Package.swift") {
                    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                    let unpack = try await runProgram(["tar", "-xJf", "\(fixtures)/previous-contract.tar.xz", "-C", folder])
                    guard unpack.status == 0 else { throw TestSupportError("unpacking the previous contract failed: \(unpack.errors)") }
                }
                let package = "\(folder)/Plugins/Examples/ManifestSink"
                // Its own SDK, contract and helpers compile from scratch the first time: minutes on a loaded machine.
                let build = try await runProgram(["swift", "build", "--package-path", package, "--product", "ShutterPipeManifest"], timeout: .seconds(900))
                guard build.status == 0 else {
                    throw TestSupportError("building the example plugin against contract \(contract) failed: \(build.text.suffix(2000))\(build.errors.suffix(2000))")
                }
                return (String(contract), "\(package)/.build/debug/libShutterPipeManifest.so")
            }
        }
        return try await built!.value
    }
}

/// The contract as its next minor revision could have it (scripts/grow-contract: a new
/// shutter event `focus` and a new camera-setting kind `point`), built once per test run
/// in .build/contract-growth. Returns the folder of its libShutterPipeKit.so.
public func grownContract() async throws -> String {
    try await GrowthBuilds.shared.grownContract()
}

/// The growth probe (Tests/Fixtures/GrowthProbe), a plugin built against today's contract,
/// built once per test run. Returns the path of its shared library.
public func growthProbePlugin() async throws -> String {
    try await GrowthBuilds.shared.probe()
}

private actor GrowthBuilds {
    static let shared = GrowthBuilds()
    private var grown: Task<String, any Error>?
    private var probeBuild: Task<String, any Error>?

    func grownContract() async throws -> String {
        if grown == nil {
            grown = Task {
                let build = try await runProgram(["\(repositoryRoot)/scripts/grow-contract"], timeout: .seconds(900))
                guard build.status == 0, let folder = build.text.split(separator: "\n").last.map(String.init) else {
                    throw TestSupportError("scripts/grow-contract failed: \(build.text.suffix(2000))\(build.errors.suffix(2000))")
                }
                return folder
            }
        }
        return try await grown!.value
    }

    func probe() async throws -> String {
        if probeBuild == nil {
            probeBuild = Task {
                let package = "\(repositoryRoot)/Tests/Fixtures/GrowthProbe"
                let build = try await runProgram(["swift", "build", "--package-path", package], timeout: .seconds(900))
                guard build.status == 0 else { throw TestSupportError("building the growth probe failed: \(build.text.suffix(2000))\(build.errors.suffix(2000))") }
                return "\(package)/.build/debug/libShutterPipeGrowthProbe.so"
            }
        }
        return try await probeBuild!.value
    }
}
