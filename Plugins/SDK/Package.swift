// swift-tools-version:6.0
// The shutterpipe plugin SDK: the plugin-facing core, ShutterPipeKit.
//
// Its only product is a dynamic library. The shutterpipe executable, every built-in
// plugin and every runtime-loaded plugin link this one copy, so that protocol casts and
// the plugin registry are shared across the process (see docs/architecture.md).
import PackageDescription

let package = Package(
    name: "ShutterPipeSDK",
    products: [
        .library(name: "ShutterPipeKit", type: .dynamic, targets: ["ShutterPipeKit"]),
    ],
    targets: [
        .target(name: "ShutterPipeKit", path: "Sources/ShutterPipeKit"),
    ]
)
