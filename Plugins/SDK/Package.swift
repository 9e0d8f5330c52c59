// swift-tools-version:6.0
// The shutterpipe plugin SDK: the plugin-facing core, ShutterPipeKit.
//
// Its plugin-facing product is a dynamic library. The shutterpipe executable, every
// built-in plugin and every runtime-loaded plugin link this one copy, so that protocol
// casts and the plugin registry are shared across the process (see docs/architecture.md).
// ShutterPipeConformance is for tests only: the contract checks plugin authors run.
import PackageDescription

let package = Package(
    name: "ShutterPipeSDK",
    products: [
        .library(name: "ShutterPipeKit", type: .dynamic, targets: ["ShutterPipeKit"]),
        // For plugin authors' tests: checks a plugin against the coordinator's contracts.
        .library(name: "ShutterPipeConformance", targets: ["ShutterPipeConformance"]),
    ],
    targets: [
        .target(name: "ShutterPipeKit", path: "Sources/ShutterPipeKit"),
        .target(name: "ShutterPipeConformance", dependencies: ["ShutterPipeKit"], path: "Sources/ShutterPipeConformance"),
    ]
)
