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
