import Foundation
import TestSupport
import Testing

/// The runtime belongs to the host: a plugin built against the SDK, as a third-party
/// author builds one, cannot import the coordinator.
@Suite("The runtime is out of a plugin's reach", .timeLimit(.minutes(20)))
struct RuntimeOutOfReachTests {
    @Test("a plugin package that imports ShutterPipeRuntime fails to build: no SDK product carries it")
    func pluginCannotImportTheRuntime() async throws {
        let folder = TemporaryDirectory("runtime-reach")
        let sources = folder.file("Sources/Reach")
        try FileManager.default.createDirectory(atPath: sources, withIntermediateDirectories: true)
        try """
        // swift-tools-version:6.0
        import PackageDescription
        let package = Package(
            name: "Reach",
            products: [.library(name: "Reach", type: .dynamic, targets: ["Reach"])],
            dependencies: [.package(path: "\(repositoryRoot)/Plugins/SDK/ShutterPipeKit"), .package(path: "\(repositoryRoot)/Plugins/SDK")],
            targets: [.target(name: "Reach", dependencies: [.product(name: "ShutterPipeKit", package: "ShutterPipeKit"),
                                                           .product(name: "ShutterPipeSupport", package: "SDK")])]
        )
        """.writeTestFile(folder.file("Package.swift"))
        try "import ShutterPipeKit\nimport ShutterPipeSupport\nimport ShutterPipeRuntime\n\npublic func reach() -> Any.Type { ShutterCoordinator.self }\n"
            .writeTestFile("\(sources)/Reach.swift")
        // The SDK builds once in a scratch folder kept between runs.
        let scratch = "\(repositoryRoot)/.build/runtime-reach"
        let build = try await runProgram(["swift", "build", "--package-path", folder.path, "--scratch-path", scratch], timeout: .seconds(900))
        #expect(build.status != 0)
        #expect((build.text + build.errors).contains("no such module 'ShutterPipeRuntime'"), "\((build.text + build.errors).suffix(3000))")
        // The same package without that import builds: the failure is the runtime's absence, nothing else.
        try "import ShutterPipeKit\nimport ShutterPipeSupport\n\npublic func reach() -> Int { LineReader.defaultLimit }\n"
            .writeTestFile("\(sources)/Reach.swift")
        let plain = try await runProgram(["swift", "build", "--package-path", folder.path, "--scratch-path", scratch], timeout: .seconds(900))
        #expect(plain.status == 0, "\((plain.text + plain.errors).suffix(3000))")
    }
}
